"""One module per route; each page is thin and built from components."""
