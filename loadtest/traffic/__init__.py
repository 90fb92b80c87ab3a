"""``loadtest traffic``: an account's own request logs (Azure Monitor's, archived or exported, or Storage Analytics')
read into a run's outputs: which partitions production ran hot, from the service's records of every request."""
