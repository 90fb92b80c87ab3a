"""partition-stress: find hot partitions in Azure Table Storage before production does."""

__version__ = "0.1.0"
