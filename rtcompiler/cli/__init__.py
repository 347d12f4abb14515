"""Stage 7: the ``rtc`` command line."""
