// What the Partitions tab and the HTML report's Partitions section draw from one live view (live_view in
// loadtest/live/partitions_tab.py): entities/s per partition against the target, demand beside it in an open loop, throttled
// attempts, a key heat map of the recent seconds and the table of findings. ECharts, as Locust's own Charts tab.
// Keys and messages are anyone's text (production logs, traffic profiles): React and ECharts' canvas draw them as text;
// a tooltip formatter's string is HTML to ECharts, so what it holds is encoded (encodeHTML).
import { useEffect, useRef } from "react";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Chip from "@mui/material/Chip";
import Link from "@mui/material/Link";
import Paper from "@mui/material/Paper";
import Table from "@mui/material/Table";
import TableBody from "@mui/material/TableBody";
import TableCell from "@mui/material/TableCell";
import TableContainer from "@mui/material/TableContainer";
import TableHead from "@mui/material/TableHead";
import TableRow from "@mui/material/TableRow";
import Typography from "@mui/material/Typography";
import * as echarts from "echarts/core";
import * as charts from "echarts/charts";
import * as components from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

// the parts the panel draws, registered on ECharts' core (the rest stays out of the bundle)
echarts.use([
  charts.LineChart,
  charts.HeatmapChart,
  components.DataZoomComponent,
  components.GridComponent,
  components.LegendComponent,
  components.TitleComponent,
  components.TooltipComponent,
  components.VisualMapComponent,
  CanvasRenderer,
]);

const { encodeHTML } = echarts.format;
const HEAT_SECONDS = 60;
// a partition's colour, its demand's too; no red, which is the target's
const PALETTE = ["#5470c6", "#91cc75", "#fac858", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc", "#1e88e5", "#8d6e63", "#78909c"];
const TARGET_COLOUR = "#d32f2f";

/** An ECharts chart in Locust's theme; its label says what it draws, for screen readers and for the tests. */
function EChart({ option, isDarkMode, height, id, label }) {
  const element = useRef(null);
  const chart = useRef(null);

  useEffect(() => {
    chart.current = echarts.init(element.current, isDarkMode ? "dark" : null);
    const resize = () => chart.current && chart.current.resize();
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      chart.current.dispose();
      chart.current = null;
    };
  }, [isDarkMode]);

  useEffect(() => {
    // each poll replaces the series and keeps what the user chose (legend entries hidden, the zoom); no animation:
    // a poll would replay it, and a report is read as it stands
    chart.current.setOption({ backgroundColor: "transparent", animation: false, ...option }, { replaceMerge: ["series"] });
  }, [option, isDarkMode]);

  return <div id={id} ref={element} role="img" aria-label={label} style={{ width: "100%", height }} />;
}

/** A series' name as the legend shows it: the partition, and its finding when it is over the target. */
function legendName(name, findings) {
  const finding = findings[name];
  return finding === "HOT" || finding === "THROTTLED" ? `${name} · ${finding}` : name;
}

function loadOption(data, findings) {
  const { t, series, demand = {} } = data.chart;
  const x = t.map(String);
  const colour = Object.fromEntries(Object.keys(series).map((name, i) => [name, PALETTE[i % PALETTE.length]]));
  const lines = Object.entries(series).map(([name, values]) => ({
    name: legendName(name, findings),
    type: "line",
    showSymbol: false,
    color: colour[name],
    data: values,
  }));
  const asked = Object.entries(demand).map(([name, values]) => ({
    name: `demand, ${name}`,
    type: "line",
    showSymbol: false,
    color: colour[name],
    lineStyle: { type: "dotted" },
    data: values,
  }));
  const target = {
    name: `target ${data.target.toLocaleString()}/s`,
    type: "line",
    showSymbol: false,
    lineStyle: { type: "dashed", width: 2 },
    color: TARGET_COLOUR,
    data: x.map(() => data.target),
  };
  return {
    title: { text: "Entities/s per partition", left: "center", textStyle: { fontSize: 14 } },
    tooltip: { trigger: "axis" },
    legend: { type: "scroll", bottom: 0 },
    grid: { left: 60, right: 30, top: 40, bottom: 60 },
    xAxis: { type: "category", data: x, name: "s since start", nameLocation: "middle", nameGap: 25 },
    yAxis: { type: "value", name: "entities/s" },
    dataZoom: [{ type: "inside" }],
    series: [...lines, ...asked, target],
  };
}

function throttledOption(data) {
  const { t, throttled = {} } = data.chart;
  return {
    title: { text: "Throttled attempts/s", left: "center", textStyle: { fontSize: 14 } },
    tooltip: { trigger: "axis" },
    legend: { type: "scroll", bottom: 0 },
    grid: { left: 60, right: 30, top: 40, bottom: 60 },
    xAxis: { type: "category", data: t.map(String), name: "s since start", nameLocation: "middle", nameGap: 25 },
    yAxis: { type: "value", name: "attempts/s", minInterval: 1 },
    series: Object.entries(throttled).map(([name, values]) => ({ name, type: "line", showSymbol: false, data: values })),
  };
}

function heatOption(data) {
  // a row's cells: one partition's entities (a group's hottest), as the finding and the scale's target are
  const heat = data.chart.heat;
  const names = Object.keys(heat);
  const seconds = data.chart.t.slice(-HEAT_SECONDS);
  const cells = [];
  names.forEach((name, row) => {
    heat[name].slice(-HEAT_SECONDS).forEach((value, column) => cells.push([column, row, value]));
  });
  return {
    title: { text: `Key heat map, the last ${HEAT_SECONDS} s (the middle of the scale is the target)`, left: "center", textStyle: { fontSize: 14 } },
    tooltip: {
      // ECharts takes a formatter's string as HTML: the key (anyone's text) is encoded, as its default tooltips do
      formatter: ({ value: [column, row, v] }) =>
        `${encodeHTML(names[row])}<br/>${encodeHTML(String(seconds[column]))} s: ${encodeHTML(v.toLocaleString())} entities/s`,
    },
    grid: { left: 140, right: 30, top: 40, bottom: 80 },
    xAxis: { type: "category", data: seconds.map(String), name: "s since start", nameLocation: "middle", nameGap: 25 },
    yAxis: { type: "category", data: names, inverse: true },
    visualMap: {
      min: 0,
      max: 2 * data.target,
      orient: "horizontal",
      left: "center",
      bottom: 0,
      text: [`${(2 * data.target).toLocaleString()}/s (2× target)`, "0"],
      inRange: { color: ["#2e7d32", "#fdd835", "#c62828"] },
    },
    series: [{ name: "entities/s", type: "heatmap", data: cells, progressive: 0 }],
  };
}

/** A finding kind's badge in its severity's colours, as every page of the tool shows it (the view's ``badges``). */
function Badge({ kind, badges }) {
  const colours = badges[kind] || {};
  return <Chip size="small" label={kind} sx={{ bgcolor: colours.background, color: colours.text }} />;
}

/** The stopped test's findings, as its report opens with them. */
function Findings({ findings, badges }) {
  return (
    <Paper sx={{ p: 2 }} id="partition-stress-findings">
      <Typography variant="h6" component="h3">
        Findings of the test
      </Typography>
      {findings.map((finding, i) => (
        <Box key={i} sx={{ display: "flex", gap: 1, alignItems: "baseline", my: 0.5 }} data-kind={finding.kind}>
          <Badge kind={finding.kind} badges={badges} />
          <Typography variant="body2">{finding.message}</Typography>
        </Box>
      ))}
    </Paper>
  );
}

/** The partitions' table, its columns as the view names them (live.py's TABLE_STRUCTURE). */
function FindingsTable({ rows, columns, badges }) {
  return (
    <TableContainer component={Paper}>
      <Table size="small" id="partition-stress-table">
        <TableHead>
          <TableRow>
            {columns.map(({ key, title }) => (
              <TableCell key={key}>{title}</TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.map((row) => (
            <TableRow key={row.partition} data-finding={row.finding}>
              {columns.map(({ key }) => (
                <TableCell key={key}>
                  {key === "finding" ? (
                    <Badge kind={row.finding} badges={badges} />
                  ) : typeof row[key] === "number" ? (
                    row[key].toLocaleString()
                  ) : (
                    row[key]
                  )}
                </TableCell>
              ))}
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}

export default function PartitionsPanel({ data, isDarkMode, error, live }) {
  if (!data) {
    return <Typography sx={{ p: 2 }}>{error ? `The partition view did not answer: ${error}` : "Loading…"}</Typography>;
  }
  const findings = Object.fromEntries(data.rows.map((row) => [row.series, row.finding]));
  const load = loadOption(data, findings);
  const heat = heatOption(data);
  const throttled = Object.values(data.chart.throttled || {}).some((values) => values.some((v) => v > 0));
  return (
    <Box sx={{ display: "flex", flexDirection: "column", gap: 2, py: 2 }} id="partition-stress">
      <Typography variant="body2" id="partition-stress-summary">
        {live ? `Test ${data.state}. ` : "At the end of the test. "}
        {data.partitions.toLocaleString()} partitions seen, each held against a target of{" "}
        {data.target.toLocaleString()} entities/s{data.open_loop ? " (open loop: judged by what the schedule asked)" : ""}.
        The charts hold the last two minutes; the peaks and findings cover the whole test.
        {live && data.report ? (
          <>
            {" "}
            <Link href={data.report}>Hot-partition report of the last test</Link>
          </>
        ) : null}
      </Typography>
      {error ? <Alert severity="warning">The partition view did not answer: {error}</Alert> : null}
      {data.lost_workers && data.lost_workers.length ? (
        <Alert severity="warning">Workers lost: {data.lost_workers.join(", ")}; their counts end where they were lost.</Alert>
      ) : null}
      {live && data.findings && data.findings.length ? <Findings findings={data.findings} badges={data.badges} /> : null}
      {data.rows.length === 0 ? (
        <Typography>No entities counted yet.</Typography>
      ) : (
        <>
          <FindingsTable rows={data.rows} columns={data.columns} badges={data.badges} />
          <Paper sx={{ p: 1 }}>
            <EChart
              id="partition-stress-load"
              option={load}
              isDarkMode={isDarkMode}
              height={360}
              label={`Entities/s per partition, lines: ${load.series.map(({ name }) => name).join("; ")}`}
            />
          </Paper>
          <Paper sx={{ p: 1 }}>
            <EChart
              id="partition-stress-heatmap"
              option={heat}
              isDarkMode={isDarkMode}
              label={`Key heat map: ${heat.yAxis.data.length} partitions by ${heat.xAxis.data.length} seconds`}
              height={Math.max(220, 120 + 28 * Object.keys(data.chart.series).length)}
            />
          </Paper>
          {throttled ? (
            <Paper sx={{ p: 1 }}>
              <EChart
                id="partition-stress-throttled"
                option={throttledOption(data)}
                isDarkMode={isDarkMode}
                height={260}
                label="Throttled attempts/s per partition"
              />
            </Paper>
          ) : (
            <Typography variant="body2">No throttled attempts in these seconds.</Typography>
          )}
        </>
      )}
    </Box>
  );
}
