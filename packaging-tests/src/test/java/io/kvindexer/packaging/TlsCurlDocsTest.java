package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code curl --cacert ... https://HOST} a user is told to run against a replica names a host that the
 * replicas' certificate (the operator's {@link IndexerSecurity#dnsNames}) holds: curl checks the name, so one that is
 * not in it (such as {@code localhost} behind a port-forward) fails with "no alternative certificate subject name
 * matches". The docs and what helm install prints are read.
 */
class TlsCurlDocsTest {

    private static final String NAME = "kv-indexer";
    private static final Pattern URL = Pattern.compile("https://([^:/\\s'\"]+):(\\d+)");
    private static final Pattern RESOLVE = Pattern.compile("--resolve\\s+([^:\\s]+):(\\d+):127\\.0\\.0\\.1");

    @Test
    void everyHttpsCurlOfTheDocsNamesAHostTheCertificateHolds() throws IOException {
        KvIndexer kvi = new KvIndexer();
        kvi.setMetadata(
                new ObjectMetaBuilder().withName(NAME).withNamespace("llm").build());
        List<String> names = IndexerSecurity.dnsNames(kvi);

        Map<String, String> texts = new LinkedHashMap<>();
        for (Path file : userFacingFiles()) {
            texts.put(RepoFiles.root().relativize(file).toString(), RepoFiles.read(file));
        }
        // what helm install prints, without and with the chart's example (named like the docs' KvIndexer)
        texts.put("NOTES.txt", notes(false));
        texts.put("NOTES.txt with the example", notes(true));
        List<String> curls = new ArrayList<>();
        texts.forEach((source, text) -> text.replace("<kvindexer-name>", NAME)
                .replace("<kvindexer>", NAME)
                .lines()
                .filter(l -> l.contains("curl") && l.contains("--cacert") && l.contains("https://"))
                .forEach(l -> curls.add(source + ": " + l.strip())));
        assertThat(curls).as("the docs show how to reach a replica over TLS").isNotEmpty();
        for (String curl : curls) {
            Matcher url = URL.matcher(curl);
            assertThat(url.find()).as(curl).isTrue();
            assertThat(names).as("a name of the certificate in %s", curl).contains(url.group(1));
            // through a port-forward: the certificate's name, sent to the forwarded local port
            Matcher resolve = RESOLVE.matcher(curl);
            assertThat(resolve.find())
                    .as("--resolve to the port-forward in %s", curl)
                    .isTrue();
            assertThat(resolve.group(1) + ":" + resolve.group(2)).as(curl).isEqualTo(url.group(1) + ":" + url.group(2));
        }
    }

    private static List<Path> userFacingFiles() throws IOException {
        Path root = RepoFiles.root();
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            List<Path> files = new ArrayList<>(docs.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> !p.getFileName().toString().startsWith("benchmarks"))
                    .sorted()
                    .toList());
            files.add(root.resolve("README.md"));
            return files;
        }
    }

    private static String notes(boolean example) {
        return new Helm(RepoFiles.chart())
                .install()
                .withName("kvio")
                .withNamespace("llm")
                .withKubeVersion("1.31.0")
                .set("example.enabled", Boolean.toString(example))
                .set("example.name", NAME)
                .clientOnly()
                .dryRun()
                .call()
                .getOutput();
    }
}
