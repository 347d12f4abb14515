"""Runtime pieces that the code generator inlines into standalone parser modules (stdlib only)."""
