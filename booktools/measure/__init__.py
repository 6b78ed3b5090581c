"""`make bench` (bench.py) and `make seeds` (seeds.py, sweep_report.py, claims_table.py)."""
