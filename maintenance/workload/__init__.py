"""Generated workloads: tables written the way streaming CDC sinks write them."""
