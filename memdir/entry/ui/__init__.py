"""`memdir ui`: a local browser for the memory folder (server.py starts it, app.py serves the pages)."""
