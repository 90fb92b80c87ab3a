"""Reaching a storage account: where the table lives and how to sign in, and how long an attempt waits (``endpoint``:
an embedded Azurite, a connection string, or an account URL and a credential), connection strings parsed strictly
(``connection_string``), the embedded Azurite (``azurite``), what a failure to reach or sign in means, in one line
without secrets (``failures``), and a blob container in the same account (``blob_container``)."""
