"""Services the tests start themselves: SeaweedFS (S3 and an Iceberg REST catalog) and a Hive Metastore.

Each module starts one service on free ports under a folder of the test run and stops it;
`tests/conftest.py` owns them as session fixtures (see `catalog_services`).
"""
