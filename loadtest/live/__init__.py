"""The live web side: Locust's start form with the tool's options and a refused start answered on it
(``start_form``), the Partitions tab's data (``partitions_tab``), the tool's build of Locust's web UI and the panel in
Locust's HTML report (``locust_ui``, served from ``webui/``, which ``scripts/setup.sh`` builds), and per-partition
metrics over OpenTelemetry (``telemetry``)."""
