"""`make grade`: grade.py tells how a submission is graded; __main__.py is the command line."""
