"""What turns the chapters into the site and into the copies readers open: see booktools/__init__.py."""
