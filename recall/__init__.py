"""recall stage of memdir."""
