// The Partitions section of Locust's --html report: the tab's panel, drawn once from the view the test ended with
// (window.partitionStress, written into the report beside Locust's own window.templateArgs), in the report's theme.
import { createRoot } from "react-dom/client";
import CssBaseline from "@mui/material/CssBaseline";
import Container from "@mui/material/Container";
import Typography from "@mui/material/Typography";
import { ThemeProvider, createTheme } from "@mui/material/styles";
import PartitionsPanel from "./PartitionsPanel.jsx";

const isDarkMode = window.theme === "dark";
const theme = createTheme({ palette: { mode: isDarkMode ? "dark" : "light" } });

createRoot(document.getElementById("partition-stress-report")).render(
  <ThemeProvider theme={theme}>
    <CssBaseline />
    <Container maxWidth="xl">
      <Typography component="h2" variant="h4" sx={{ mt: 4 }}>
        Partitions
      </Typography>
      <PartitionsPanel data={window.partitionStress} isDarkMode={isDarkMode} />
    </Container>
  </ThemeProvider>,
);
