"""The Table service's own rules, as the docs state them: the one table of operations (``operations``: op class,
request name, what the transports need), entities and the limits on keys, entities, batches and pages (``entities``),
the error codes and what each means (``error_codes``), the scalability targets by profile (``scale_targets``), the
ranges where new keys land at the ends of the key order (``key_ends``), the retry strategies (``retry``), and the forms
and times of an account's request logs (``log_forms``). Facts only: the ground every other wing stands on."""
