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
import java.util.Comparator;
import java.util.List;
import javax.imageio.ImageIO;

/**
 * A log-log PNG of achieved vs offered block ops/s over a sweep, drawn with java.awt in headless mode (no Python
 * or plotting library needed). Run as a main class on a {@link TraceBench} JSON: {@code SweepPlot IN.json OUT.png}.
 */
public final class SweepPlot {

    private static final PlotCanvas C = new PlotCanvas(900, 650, 90, 30, 50, 70);

    private SweepPlot() {}

    /** (offered, achieved, floor, kept up) of one sweep point. */
    record Sample(double offered, double achieved, double floor, boolean keptUp) {}

    public static void main(String[] args) throws IOException {
        JsonNode root = PlotCanvas.readBenchJson(args, "SweepPlot");
        List<Sample> samples = new ArrayList<>();
        for (JsonNode p : root.get("points")) {
            samples.add(new Sample(
                    p.get("offered_block_ops_per_s").asDouble(),
                    p.get("achieved_block_ops_per_s").asDouble(),
                    p.get("floor_block_ops_per_s").asDouble(),
                    p.get("kept_up").asBoolean()));
        }
        JsonNode c = root.path("config");
        draw(
                samples,
                Path.of(args[1]),
                c.path("available_processors").asInt(0),
                subtitle(
                        c.path("trace").asText(),
                        c.path("workers").asInt(),
                        c.path("engine_blocks").asInt(),
                        c.path("block_size").asInt(),
                        c.path("threads").asInt(),
                        c.path("issuers").asInt(),
                        c.path("prehashed").asBoolean()));
    }

    static String subtitle(
            String trace, int workers, int engineBlocks, int blockSize, int threads, int issuers, boolean prehashed) {
        return Path.of(trace).getFileName() + ", " + workers + " engines x " + engineBlocks + " blocks, block "
                + blockSize + ", " + threads + " writer + " + issuers + " issuer thread(s), "
                + (prehashed ? "prehashed" : "hashing timed");
    }

    static void write(List<TraceBench.Point> points, Path out, String subtitle) throws IOException {
        List<Sample> samples = points.stream()
                .map(p -> new Sample(
                        p.offered(), p.median().achieved(), p.median().floor(), p.keptUp()))
                .toList();
        draw(samples, out, Runtime.getRuntime().availableProcessors(), subtitle);
    }

    static void draw(List<Sample> unsorted, Path out, int cores, String subtitle) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Sample> samples = new ArrayList<>(unsorted);
        samples.sort(Comparator.comparingDouble(Sample::offered));
        double lo = Double.MAX_VALUE;
        double hi = 0;
        for (Sample s : samples) {
            lo = Math.min(lo, Math.min(s.offered(), s.achieved()));
            hi = Math.max(hi, Math.max(Math.max(s.offered(), s.achieved()), s.floor()));
        }
        double minExp = Math.floor(Math.log10(lo));
        double maxExp = Math.ceil(Math.log10(hi));
        if (maxExp <= minExp) {
            maxExp = minExp + 1;
        }
        BufferedImage img = C.image();
        Graphics2D g = C.begin(img);
        Axis axis = new Axis(minExp, maxExp);
        for (double e = minExp; e <= maxExp; e++) {
            for (int m = 1; m < 10; m++) {
                double v = m * Math.pow(10, e);
                if (Math.log10(v) > maxExp) {
                    break;
                }
                g.setColor(m == 1 ? new Color(200, 200, 200) : new Color(235, 235, 235));
                g.drawLine(axis.x(v), C.top(), axis.x(v), C.height() - C.bottom());
                g.drawLine(C.left(), axis.y(v), C.width() - C.right(), axis.y(v));
            }
            g.setColor(Color.DARK_GRAY);
            String label = label(Math.pow(10, e));
            g.drawString(
                    label,
                    axis.x(Math.pow(10, e)) - g.getFontMetrics().stringWidth(label) / 2,
                    C.height() - C.bottom() + 18);
            g.drawString(label, C.left() - 8 - g.getFontMetrics().stringWidth(label), axis.y(Math.pow(10, e)) + 4);
        }
        C.frame(g);
        // achieved = offered
        g.setColor(Color.GRAY);
        g.setStroke(new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {6, 5}, 0));
        g.drawLine(
                axis.x(Math.pow(10, minExp)),
                axis.y(Math.pow(10, minExp)),
                axis.x(Math.pow(10, maxExp)),
                axis.y(Math.pow(10, maxExp)));
        // floor (median per point) as a dotted line
        g.setColor(new Color(0, 140, 0));
        polyline(
                g,
                axis,
                samples,
                true,
                new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {2, 4}, 0));
        g.setColor(new Color(20, 80, 200));
        polyline(g, axis, samples, false, new BasicStroke(2.2f));
        for (Sample s : samples) {
            int x = axis.x(s.offered());
            int y = axis.y(s.achieved());
            if (s.keptUp()) {
                g.fillOval(x - 5, y - 5, 10, 10);
            } else {
                g.setStroke(new BasicStroke(2f));
                g.drawOval(x - 5, y - 5, 10, 10);
            }
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString(
                "kv-indexer TraceBench: achieved vs offered block ops/s (log-log, " + cores + " cores)", C.left(), 22);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawString(subtitle, C.left(), 40);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString("offered block ops/s", C.width() / 2 - 60, C.height() - 25);
        g.rotate(-Math.PI / 2);
        g.drawString("achieved block ops/s (completion-inclusive)", -C.height() / 2 - 130, 22);
        g.rotate(Math.PI / 2);
        int lx = C.left() + 15;
        int ly = C.top() + 20;
        g.setColor(new Color(20, 80, 200));
        g.fillOval(lx, ly - 9, 10, 10);
        g.drawString("achieved (filled: kept up within 1.1x window, hollow: behind)", lx + 18, ly);
        g.setColor(new Color(0, 140, 0));
        g.drawString(
                "... floor (" + (subtitle.contains("prehashed") ? "" : "hash tokens + ")
                        + "one map op per block, same process)",
                lx,
                ly + 20);
        g.setColor(Color.GRAY);
        g.drawString("- - achieved = offered", lx, ly + 40);
        g.dispose();
        ImageIO.write(img, "png", out.toFile());
    }

    private static void polyline(Graphics2D g, Axis axis, List<Sample> samples, boolean floor, BasicStroke stroke) {
        Path2D.Double path = new Path2D.Double();
        for (int i = 0; i < samples.size(); i++) {
            Sample s = samples.get(i);
            int x = axis.x(s.offered());
            int y = axis.y(floor ? s.floor() : s.achieved());
            if (i == 0) {
                path.moveTo(x, y);
            } else {
                path.lineTo(x, y);
            }
        }
        g.setStroke(stroke);
        g.draw(path);
    }

    private static String label(double v) {
        if (v >= 1e6) {
            return String.format("%.0fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format("%.0fk", v / 1e3);
        }
        return String.format("%.0f", v);
    }

    private record Axis(double minExp, double maxExp) {
        int x(double v) {
            return C.x(v, minExp, maxExp);
        }

        int y(double v) {
            return C.y(v, minExp, maxExp);
        }
    }
}
