"""Services the tests start themselves: an S3 server (moto), a Hive Metastore and a REST catalog.

Each module starts one service on free ports under a folder of the test run and stops it;
`tests/conftest.py` owns them as session fixtures (see `catalog_services`).
"""
