"""The workload a user asks for: PartitionKey designs and RowKeys (``keys``), their forms on the command line read whole
(``key_specs``), ``template:`` keys and write sharding's bucket prefix (``key_templates``), a design with its hot keys
sharded as a key strategy (``sharded_keys``), access skew (``skew``), open-loop arrivals (``arrivals``), what an OData
filter reaches (``query_reach``) and a Table URI names (``table_uri``), and production's traffic profile
(``traffic_profile``) replayed as a key strategy (``traffic_keys``)."""
