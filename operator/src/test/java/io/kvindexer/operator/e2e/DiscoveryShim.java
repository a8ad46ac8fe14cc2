package io.kvindexer.operator.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

/**
 * A throw-away front for the CRUD mock API server so that the real kubectl can talk to it: it answers the API
 * discovery documents the mock lacks ({@code /version}, {@code /api}, {@code /apis}, {@code /api/v1},
 * {@code /apis/<group>/<version>}, our groups derived from the CRD files as the API server derives them: plural,
 * singular, kind, short names, status and scale subresources), renders server-side Tables for our custom resources
 * from the CRDs' printer columns (what {@code kubectl get} shows), serves the scale subresource the mock lacks (an
 * autoscaling/v1 Scale read from and written to the paths the CRD declares, as the API server does for a custom
 * resource: what {@code kubectl scale} and a HorizontalPodAutoscaler call) and forwards everything else to the mock
 * unchanged.
 */
final class DiscoveryShim implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> VERBS =
            List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");

    /** name, singular, namespaced, kind, shortNames (comma-separated or empty). */
    private record Res(String name, String singular, boolean namespaced, String kind, String shortNames) {}

    private final Map<String, List<Res>> builtIn = Map.of(
            "v1",
                    List.of(
                            new Res("pods", "pod", true, "Pod", "po"),
                            new Res("pods/status", "", true, "Pod", ""),
                            new Res("services", "service", true, "Service", "svc"),
                            new Res("events", "event", true, "Event", "ev"),
                            new Res("namespaces", "namespace", false, "Namespace", "ns")),
            "apps/v1", List.of(new Res("statefulsets", "statefulset", true, "StatefulSet", "sts")),
            "autoscaling/v2",
                    List.of(new Res(
                            "horizontalpodautoscalers",
                            "horizontalpodautoscaler",
                            true,
                            "HorizontalPodAutoscaler",
                            "hpa")),
            "policy/v1",
                    List.of(new Res("poddisruptionbudgets", "poddisruptionbudget", true, "PodDisruptionBudget", "pdb")),
            "coordination.k8s.io/v1", List.of(new Res("leases", "lease", true, "Lease", "")),
            "apiextensions.k8s.io/v1",
                    List.of(new Res(
                            "customresourcedefinitions",
                            "customresourcedefinition",
                            false,
                            "CustomResourceDefinition",
                            "crd,crds")));

    private final HttpServer server;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String backend;
    private final List<CustomResourceDefinition> crds;

    DiscoveryShim(String backendUrl, Path crdDir) throws IOException {
        this.backend = backendUrl.endsWith("/") ? backendUrl.substring(0, backendUrl.length() - 1) : backendUrl;
        this.crds = new ArrayList<>();
        try (Stream<Path> files = Files.list(crdDir)) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".yml")).sorted().toList()) {
                try (InputStream in = Files.newInputStream(f)) {
                    crds.add(Serialization.unmarshal(in, CustomResourceDefinition.class));
                }
            }
        }
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            JsonNode doc = "GET".equals(ex.getRequestMethod()) ? discovery(path) : null;
            if (doc != null) {
                send(ex, 200, "application/json", JSON.writeValueAsBytes(doc));
                return;
            }
            CustomResourceDefinition scaled =
                    path.endsWith("/scale") ? crdFor(path.substring(0, path.length() - 6)) : null;
            if (scaled != null
                    && scaled.getSpec()
                                    .getVersions()
                                    .getFirst()
                                    .getSubresources()
                                    .getScale()
                            != null) {
                scale(ex, scaled, path.substring(0, path.length() - 6));
                return;
            }
            forward(ex);
        } catch (Exception e) {
            send(ex, 500, "text/plain", String.valueOf(e).getBytes(StandardCharsets.UTF_8));
        }
    }

    private JsonNode discovery(String path) {
        switch (path) {
            case "/version":
                return JSON.createObjectNode()
                        .put("major", "1")
                        .put("minor", "32")
                        .put("gitVersion", "v1.32.0-mock")
                        .put("platform", "linux/amd64");
            case "/api":
                ObjectNode api = JSON.createObjectNode().put("kind", "APIVersions");
                api.putArray("versions").add("v1");
                api.putArray("serverAddressByClientCIDRs")
                        .addObject()
                        .put("clientCIDR", "0.0.0.0/0")
                        .put("serverAddress", "127.0.0.1");
                return api;
            case "/apis":
                ObjectNode list =
                        JSON.createObjectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
                ArrayNode groups = list.putArray("groups");
                groupVersions().forEach(gv -> {
                    if (!gv.contains("/")) {
                        return;
                    }
                    ObjectNode g = groups.addObject().put("name", gv.substring(0, gv.indexOf('/')));
                    ObjectNode v = JSON.createObjectNode()
                            .put("groupVersion", gv)
                            .put("version", gv.substring(gv.indexOf('/') + 1));
                    g.putArray("versions").add(v);
                    g.set("preferredVersion", v);
                });
                return list;
            default:
                String gv = path.startsWith("/api/")
                        ? path.substring(5)
                        : path.startsWith("/apis/") ? path.substring(6) : null;
                return gv != null && groupVersions().contains(gv) ? resourceList(gv) : null;
        }
    }

    private List<String> groupVersions() {
        List<String> gvs = new ArrayList<>(builtIn.keySet());
        crds.forEach(c -> c.getSpec().getVersions().forEach(v -> {
            String gv = c.getSpec().getGroup() + "/" + v.getName();
            if (!gvs.contains(gv)) {
                gvs.add(gv);
            }
        }));
        gvs.sort(String::compareTo);
        return gvs;
    }

    private JsonNode resourceList(String gv) {
        List<Res> resources = new ArrayList<>(builtIn.getOrDefault(gv, List.of()));
        for (CustomResourceDefinition c : crds) {
            for (CustomResourceDefinitionVersion v : c.getSpec().getVersions()) {
                if (!(c.getSpec().getGroup() + "/" + v.getName()).equals(gv)) {
                    continue;
                }
                var names = c.getSpec().getNames();
                boolean namespaced = "Namespaced".equals(c.getSpec().getScope());
                resources.add(new Res(
                        names.getPlural(),
                        names.getSingular(),
                        namespaced,
                        names.getKind(),
                        String.join(",", names.getShortNames() == null ? List.of() : names.getShortNames())));
                if (v.getSubresources() != null && v.getSubresources().getStatus() != null) {
                    resources.add(new Res(names.getPlural() + "/status", "", namespaced, names.getKind(), ""));
                }
                if (v.getSubresources() != null && v.getSubresources().getScale() != null) {
                    resources.add(new Res(names.getPlural() + "/scale", "", namespaced, "Scale", ""));
                }
            }
        }
        ObjectNode doc = JSON.createObjectNode()
                .put("kind", "APIResourceList")
                .put("apiVersion", "v1")
                .put("groupVersion", gv);
        ArrayNode arr = doc.putArray("resources");
        for (Res r : resources) {
            ObjectNode n = arr.addObject()
                    .put("name", r.name())
                    .put("singularName", r.singular())
                    .put("namespaced", r.namespaced())
                    .put("kind", r.kind());
            ArrayNode verbs = n.putArray("verbs");
            (r.name().contains("/") ? List.of("get", "patch", "update") : VERBS).forEach(verbs::add);
            if (r.name().endsWith("/scale")) {
                n.put("group", "autoscaling").put("version", "v1");
            }
            if (!r.shortNames().isEmpty()) {
                ArrayNode sn = n.putArray("shortNames");
                for (String s : r.shortNames().split(",")) {
                    sn.add(s);
                }
            }
        }
        return doc;
    }

    private void forward(HttpExchange ex) throws IOException, InterruptedException {
        byte[] body = ex.getRequestBody().readAllBytes();
        String accept = ex.getRequestHeaders().getFirst("Accept");
        String contentType = ex.getRequestHeaders().getFirst("Content-Type");
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(backend + ex.getRequestURI()))
                .timeout(Duration.ofSeconds(30))
                .method(
                        ex.getRequestMethod(),
                        body.length == 0
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Accept", "application/json");
        if (contentType != null) {
            req.header("Content-Type", contentType);
        }
        HttpResponse<byte[]> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
        String type = resp.headers().firstValue("Content-Type").orElse("application/json");
        byte[] out = resp.body();
        CustomResourceDefinition crd = crdFor(ex.getRequestURI().getPath());
        if (resp.statusCode() == 200 && accept != null && accept.contains("as=Table") && crd != null) {
            out = JSON.writeValueAsBytes(table(crd, JSON.readTree(out)));
            type = "application/json";
        }
        send(ex, resp.statusCode(), type, out);
    }

    /**
     * The scale subresource of a custom resource: GET answers an autoscaling/v1 Scale from the CRD's
     * specReplicasPath, statusReplicasPath and labelSelectorPath; PUT or PATCH (merge) of a Scale sets the object's
     * spec replicas with a merge patch on the object (the mock's own write path).
     */
    private void scale(HttpExchange ex, CustomResourceDefinition crd, String objectPath)
            throws IOException, InterruptedException {
        var paths = crd.getSpec().getVersions().getFirst().getSubresources().getScale();
        String method = ex.getRequestMethod();
        if (!method.equals("GET")) {
            JsonNode body = JSON.readTree(ex.getRequestBody().readAllBytes());
            JsonNode replicas = body.path("spec").path("replicas");
            if (!replicas.isInt()) {
                send(
                        ex,
                        422,
                        "application/json",
                        JSON.writeValueAsBytes(JSON.createObjectNode()
                                .put("kind", "Status")
                                .put("status", "Failure")
                                .put("message", "spec.replicas required")));
                return;
            }
            ObjectNode patch = JSON.createObjectNode();
            ObjectNode at = patch;
            String[] parts = paths.getSpecReplicasPath().substring(1).split("\\.");
            for (int i = 0; i < parts.length - 1; i++) {
                at = at.putObject(parts[i]);
            }
            at.put(parts[parts.length - 1], replicas.asInt());
            HttpResponse<byte[]> r = http.send(
                    HttpRequest.newBuilder(URI.create(backend + objectPath))
                            .timeout(Duration.ofSeconds(30))
                            .header("Content-Type", "application/merge-patch+json")
                            .method("PATCH", HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(patch)))
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() / 100 != 2) { // the mock answers a patch with 202
                send(ex, r.statusCode(), "application/json", r.body());
                return;
            }
        }
        HttpResponse<byte[]> r = http.send(
                HttpRequest.newBuilder(URI.create(backend + objectPath))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            send(ex, r.statusCode(), "application/json", r.body());
            return;
        }
        JsonNode object = JSON.readTree(r.body());
        ObjectNode scale = JSON.createObjectNode().put("kind", "Scale").put("apiVersion", "autoscaling/v1");
        ObjectNode meta = scale.putObject("metadata");
        for (String f : List.of("name", "namespace", "uid", "resourceVersion", "creationTimestamp")) {
            if (object.path("metadata").has(f)) {
                meta.set(f, object.path("metadata").get(f));
            }
        }
        scale.putObject("spec")
                .put("replicas", at(object, paths.getSpecReplicasPath()).asInt(0));
        ObjectNode status = scale.putObject("status")
                .put("replicas", at(object, paths.getStatusReplicasPath()).asInt(0));
        JsonNode selector = at(object, paths.getLabelSelectorPath());
        if (selector.isTextual()) {
            status.put("selector", selector.asText());
        }
        send(ex, 200, "application/json", JSON.writeValueAsBytes(scale));
    }

    private CustomResourceDefinition crdFor(String path) {
        for (CustomResourceDefinition c : crds) {
            if (path.startsWith("/apis/" + c.getSpec().getGroup() + "/")
                    && (path.endsWith("/" + c.getSpec().getNames().getPlural())
                            || path.contains("/" + c.getSpec().getNames().getPlural() + "/"))
                    && !path.endsWith("/status")) {
                return c;
            }
        }
        return null;
    }

    /** A meta.k8s.io/v1 Table from the CRD's printer columns, as the API server renders it. */
    private JsonNode table(CustomResourceDefinition crd, JsonNode listOrItem) {
        List<CustomResourceColumnDefinition> columns =
                crd.getSpec().getVersions().getFirst().getAdditionalPrinterColumns();
        ObjectNode t = JSON.createObjectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
        t.putObject("metadata")
                .put(
                        "resourceVersion",
                        listOrItem.path("metadata").path("resourceVersion").asText(""));
        ArrayNode defs = t.putArray("columnDefinitions");
        defs.addObject()
                .put("name", "Name")
                .put("type", "string")
                .put("format", "name")
                .put("description", "")
                .put("priority", 0);
        for (CustomResourceColumnDefinition c : columns) {
            defs.addObject()
                    .put("name", c.getName())
                    .put("type", c.getType().equals("date") ? "string" : c.getType())
                    .put("format", "")
                    .put("description", c.getDescription() == null ? "" : c.getDescription())
                    .put("priority", c.getPriority() == null ? 0 : c.getPriority());
        }
        ArrayNode rows = t.putArray("rows");
        List<JsonNode> items = new ArrayList<>();
        if (listOrItem.has("items")) {
            listOrItem.get("items").forEach(items::add);
        } else {
            items.add(listOrItem);
        }
        for (JsonNode item : items) {
            ObjectNode row = rows.addObject();
            ArrayNode cells = row.putArray("cells");
            cells.add(item.path("metadata").path("name").asText());
            for (CustomResourceColumnDefinition c : columns) {
                JsonNode v = at(item, c.getJsonPath());
                if (v.isMissingNode() || v.isNull()) {
                    cells.addNull();
                } else if (c.getType().equals("date")) {
                    cells.add(age(v.asText()));
                } else {
                    cells.add(v);
                }
            }
            ObjectNode partial = row.putObject("object");
            partial.put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1");
            partial.set("metadata", item.path("metadata"));
        }
        return t;
    }

    /** One step of a printer column's JSONPath: {@code .field}, or {@code .list[?(@.key=="value")]}. */
    private static final java.util.regex.Pattern STEP =
            java.util.regex.Pattern.compile("\\.(\\w+)(?:\\[\\?\\(@\\.(\\w+)==\"([^\"]*)\"\\)])?");

    /** What the API server's JSONPath gives for the paths our printer columns use (missing when nothing matches). */
    private static JsonNode at(JsonNode item, String jsonPath) {
        java.util.regex.Matcher m = STEP.matcher(jsonPath);
        JsonNode n = item;
        int at = 0;
        while (at < jsonPath.length()) {
            if (!m.find(at) || m.start() != at) {
                throw new IllegalArgumentException("a JSONPath this shim does not read: " + jsonPath);
            }
            n = n.path(m.group(1));
            if (m.group(2) != null) { // the first element whose key has the value, as kubectl shows one
                JsonNode match = com.fasterxml.jackson.databind.node.MissingNode.getInstance();
                for (JsonNode e : n) {
                    if (m.group(3).equals(e.path(m.group(2)).asText(null))) {
                        match = e;
                        break;
                    }
                }
                n = match;
            }
            at = m.end();
        }
        return n;
    }

    /** The API server's human age ("45s", "3m", "2h"). */
    private static String age(String timestamp) {
        try {
            long s = Math.max(
                    0, Duration.between(Instant.parse(timestamp), Instant.now()).toSeconds());
            return s < 120 ? s + "s" : s < 7200 ? (s / 60) + "m" : s < 172800 ? (s / 3600) + "h" : (s / 86400) + "d";
        } catch (RuntimeException e) {
            return "<unknown>";
        }
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            ex.getResponseBody().write(body);
        }
    }
}
