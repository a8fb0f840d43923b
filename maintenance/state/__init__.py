"""icemaint's own state: table leases with fencing epochs, and the run history."""
