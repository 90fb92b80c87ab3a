// Locust's own web UI (locust-ui), its tabs as Locust orders them, with the Partitions tab after them.
import { createRoot } from "react-dom/client";
import LocustUi, { baseTabs } from "locust-ui";
import PartitionsTab from "./PartitionsTab.jsx";

const tabs = [...baseTabs, { title: "Partitions", key: "partition-stress", component: PartitionsTab }];

createRoot(document.getElementById("root")).render(<LocustUi tabs={tabs} />);
