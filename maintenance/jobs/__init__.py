"""The jobs: the job contract (`spec`, `registry`, `options`, `counters`, `docs`), one folder
per job, and the engines several jobs share (`file_groups/`, `file_removal/`,
`deletion_vectors/`). What runs a job (lease, context, record) is `maintenance/run/`; what
publishes its changes is `maintenance/publish/`."""
