// The Partitions tab: reads /partition-stress/data (loadtest/live/partitions_tab.py's live_view) every two seconds, as
// Locust's own tabs poll /stats/requests, and draws it in Locust's theme.
import { useState } from "react";
import { useSelector } from "react-redux";
import { useInterval } from "locust-ui";
import PartitionsPanel from "./PartitionsPanel.jsx";

const POLL_MS = 2000;

export default function PartitionsTab() {
  const isDarkMode = useSelector(({ theme }) => theme.isDarkMode);
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);

  useInterval(
    () =>
      fetch("./partition-stress/data")
        .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`HTTP ${response.status}`))))
        .then((view) => {
          setData(view);
          setError(null);
        })
        .catch((e) => setError(e.message)),
    POLL_MS,
    { shouldRunInterval: true, immediate: true },
  );

  return <PartitionsPanel data={data} isDarkMode={isDarkMode} error={error} live />;
}
