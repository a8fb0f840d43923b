"""The metadata layer: a snapshot's live files, the delete-applicability rule, health,
references and listings. pyiceberg only; nothing here starts a JVM."""
