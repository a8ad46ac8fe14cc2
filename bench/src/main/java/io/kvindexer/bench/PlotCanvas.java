package io.kvindexer.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The page the benchmark plots ({@link SweepPlot}, {@link WorkersPlot}) draw on: an image of {@code width} x
 * {@code height} pixels with the plot area inside the four margins, both axes log-scaled.
 */
record PlotCanvas(int width, int height, int left, int right, int top, int bottom) {

    /** A plot main's input: the {@link TraceBench} JSON named by {@code args[0]}; exits 2 unless two args are given. */
    static JsonNode readBenchJson(String[] args, String program) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: " + program + " TRACE_BENCH.json OUT.png");
            System.exit(2);
        }
        return new ObjectMapper().readTree(Path.of(args[0]).toFile());
    }

    BufferedImage image() {
        return new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    }

    /** The image's graphics, antialiased, painted white, with the 12-point sans-serif font the axis labels use. */
    Graphics2D begin(BufferedImage img) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        return g;
    }

    /** The black border of the plot area. */
    void frame(Graphics2D g) {
        g.setColor(Color.BLACK);
        g.drawRect(left, top, width - left - right, height - top - bottom);
    }

    /** The pixel column of {@code v} on a log axis from 10^lo to 10^hi. */
    int x(double v, double lo, double hi) {
        return left + (int) Math.round((Math.log10(v) - lo) / (hi - lo) * (width - left - right));
    }

    /** The pixel row of {@code v} on a log axis from 10^lo to 10^hi (up is larger). */
    int y(double v, double lo, double hi) {
        return height - bottom - (int) Math.round((Math.log10(v) - lo) / (hi - lo) * (height - top - bottom));
    }
}
