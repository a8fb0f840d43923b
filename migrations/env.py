"""Alembic environment: icemaint passes the connection in (see maintenance/state/database.py)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from maintenance.state.database import normalise_url
from maintenance.state.schema import Base

target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        # Plain `alembic -x url=... upgrade head` from this folder.
        url = context.get_x_argument(as_dictionary=True).get("url")
        if not url:
            raise SystemExit("pass the state database as: alembic -x url=<sqlalchemy url> upgrade head")
        with create_engine(normalise_url(url)).connect() as own:
            context.configure(connection=own, target_metadata=target_metadata)
            with context.begin_transaction():
                context.run_migrations()
            own.commit()
        return
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("icemaint migrations run online only: use 'icemaint db upgrade'")
run_migrations_online()
