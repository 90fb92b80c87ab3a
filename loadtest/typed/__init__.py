"""JSON read against its declared types: a value at a time, the dataclasses made on the way and the first wrong field
named in one line (``reader``), or a whole column in one pass (``column_checkers``, compiled once per type). What every
reader of results files, engines' buckets and traffic profiles checks with."""
