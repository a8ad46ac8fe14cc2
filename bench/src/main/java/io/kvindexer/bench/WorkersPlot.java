package io.kvindexer.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/**
 * A log-log PNG of the worker sweep ({@link WorkerSweep}): lookup p50 and p99, the probe floor's p50 and the paced
 * answer floor's p50 (when the JSON has it) against the number of workers, drawn with java.awt in headless mode.
 * Run as a main class on a {@link TraceBench} JSON with a {@code sweep}: {@code WorkersPlot IN.json OUT.png}.
 */
public final class WorkersPlot {

    private static final PlotCanvas C = new PlotCanvas(900, 600, 80, 30, 60, 60);

    private WorkersPlot() {}

    public static void main(String[] args) throws IOException {
        JsonNode root = PlotCanvas.readBenchJson(args, "WorkersPlot");
        List<WorkerSweep.Point> points = new ArrayList<>();
        for (JsonNode p : root.get("sweep")) {
            points.add(new WorkerSweep.Point(
                    p.get("workers").asInt(),
                    p.get("lookup_p50_us").asDouble(),
                    p.get("lookup_p99_us").asDouble(),
                    p.get("probe_floor_p50_us").asDouble(),
                    p.path("probe_floor_p99_us").asDouble(Double.NaN),
                    p.path("answer_floor_p50_us").asDouble(Double.NaN),
                    p.path("paced_floor_p50_us").asDouble(Double.NaN),
                    p.path("paced_floor_p99_us").asDouble(Double.NaN),
                    p.path("idle_lookup_p50_us").asDouble(Double.NaN),
                    p.path("kept_up").asBoolean(true),
                    p.path("memberships").asLong(),
                    p.path("bytes_per_membership").asDouble(Double.NaN),
                    p.path("window_ms").asDouble(Double.NaN),
                    p.path("warmup_runs").asInt(0),
                    p.path("jit_compiling_ms_measured").asLong(0)));
        }
        write(
                points,
                Path.of(args[1]),
                root.path("config").path("trace").asText() + ", "
                        + (root.path("config").path("prehashed").asBoolean() ? "prehashed" : "hashing timed"));
    }

    static void write(List<WorkerSweep.Point> points, Path out, String subtitle) throws IOException {
        System.setProperty("java.awt.headless", "true");
        double xLo = Math.floor(Math.log10(
                points.stream().mapToInt(WorkerSweep.Point::workers).min().orElse(1)));
        double xHi = Math.ceil(Math.log10(
                points.stream().mapToInt(WorkerSweep.Point::workers).max().orElse(10)));
        double yLo = Math.floor(Math.log10(points.stream()
                .mapToDouble(WorkerSweep.Point::probeFloorP50Us)
                .filter(v -> v > 0)
                .min()
                .orElse(0.1)));
        double yHi = Math.ceil(Math.log10(points.stream()
                .mapToDouble(WorkerSweep.Point::lookupP99Us)
                .max()
                .orElse(10)));
        xHi = Math.max(xHi, xLo + 1);
        yHi = Math.max(yHi, yLo + 1);
        BufferedImage img = C.image();
        Graphics2D g = C.begin(img);
        for (double e = xLo; e <= xHi; e++) {
            int x = C.x(Math.pow(10, e), xLo, xHi);
            g.setColor(new Color(210, 210, 210));
            g.drawLine(x, C.top(), x, C.height() - C.bottom());
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format("%.0f", Math.pow(10, e)), x - 10, C.height() - C.bottom() + 18);
        }
        for (double e = yLo; e <= yHi; e++) {
            int y = C.y(Math.pow(10, e), yLo, yHi);
            g.setColor(new Color(210, 210, 210));
            g.drawLine(C.left(), y, C.width() - C.right(), y);
            g.setColor(Color.DARK_GRAY);
            String label = Math.pow(10, e) >= 1
                    ? String.format("%.0f", Math.pow(10, e))
                    : String.format("%.1f", Math.pow(10, e));
            g.drawString(label, C.left() - 10 - g.getFontMetrics().stringWidth(label), y + 4);
        }
        C.frame(g);
        series(g, points, WorkerSweep.Point::lookupP50Us, new Color(20, 80, 200), xLo, xHi, yLo, yHi);
        series(g, points, WorkerSweep.Point::lookupP99Us, new Color(200, 60, 20), xLo, xHi, yLo, yHi);
        series(g, points, WorkerSweep.Point::probeFloorP50Us, new Color(0, 140, 0), xLo, xHi, yLo, yHi);
        // JSON written before the paced floor existed has none
        boolean paced = points.stream().allMatch(p -> p.pacedFloorP50Us() > 0);
        if (paced) {
            series(g, points, WorkerSweep.Point::pacedFloorP50Us, new Color(130, 40, 160), xLo, xHi, yLo, yHi);
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString("kv-indexer TraceBench: lookup latency vs workers sharing the trace (log-log)", C.left(), 22);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString(subtitle, C.left(), 40);
        g.drawString("workers", C.width() / 2 - 20, C.height() - 20);
        g.rotate(-Math.PI / 2);
        g.drawString("microseconds per query", -C.height() / 2 - 60, 22);
        g.rotate(Math.PI / 2);
        legend(g, 0, "lookup p50", new Color(20, 80, 200));
        legend(g, 1, "lookup p99", new Color(200, 60, 20));
        legend(g, 2, "probe floor p50 (one hash-map probe per query block, same run)", new Color(0, 140, 0));
        if (paced) {
            legend(
                    g,
                    3,
                    "paced answer floor p50 (the same probes and answer, at the lookups' deadlines)",
                    new Color(130, 40, 160));
        }
        g.dispose();
        ImageIO.write(img, "png", out.toFile());
    }

    private static void series(
            Graphics2D g,
            List<WorkerSweep.Point> points,
            ToDoubleFunction<WorkerSweep.Point> f,
            Color color,
            double xLo,
            double xHi,
            double yLo,
            double yHi) {
        g.setColor(color);
        g.setStroke(new BasicStroke(2f));
        Path2D.Double path = new Path2D.Double();
        for (int i = 0; i < points.size(); i++) {
            int x = C.x(points.get(i).workers(), xLo, xHi);
            int y = C.y(Math.max(f.applyAsDouble(points.get(i)), Math.pow(10, yLo)), yLo, yHi);
            if (i == 0) {
                path.moveTo(x, y);
            } else {
                path.lineTo(x, y);
            }
            g.fillOval(x - 4, y - 4, 8, 8);
        }
        g.draw(path);
    }

    private static void legend(Graphics2D g, int row, String text, Color color) {
        g.setColor(color);
        g.fillOval(C.left() + 15, C.top() + 12 + 18 * row - 8, 8, 8);
        g.drawString(text, C.left() + 30, C.top() + 12 + 18 * row);
    }
}
