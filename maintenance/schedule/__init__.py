"""What is due where, and running it: the decisions (`decisions.py`) and one maintenance cycle."""
