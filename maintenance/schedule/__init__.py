"""What is due where, and running it: the planner's decisions and one maintenance cycle."""
