package io.kvindexer.indexer.http;

import com.sun.net.httpserver.HttpServer;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * An OTLP collector of traces and logs on two free loopback ports, as a real one receives: gRPC ({@code
 * TraceService/Export}, {@code LogsService/Export}, served by grpc-java on Netty) and HTTP ({@code POST /v1/traces},
 * {@code /v1/logs}, protobuf). Keeps every span and log record it is sent with its resource's attributes and the
 * protocol it came by.
 */
public final class OtlpCollector implements AutoCloseable {

    /** One received span, its ids in hex as the W3C header writes them. */
    public record Received(
            String protocol,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            Span.SpanKind kind,
            Map<String, String> attributes,
            Map<String, String> resource) {}

    /** One received log record, its ids in hex ("" when it has none). */
    public record ReceivedLog(
            String protocol,
            String traceId,
            String spanId,
            String severity,
            String body,
            Map<String, String> attributes,
            Map<String, String> resource) {}

    private static final String SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService";
    private static final String LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService";

    private final List<Received> spans = new ArrayList<>();
    private final List<ReceivedLog> logs = new ArrayList<>();
    private final Server grpc;
    private final HttpServer http;

    public OtlpCollector() throws IOException {
        MethodDescriptor<ExportTraceServiceRequest, ExportTraceServiceResponse> export =
                MethodDescriptor.<ExportTraceServiceRequest, ExportTraceServiceResponse>newBuilder()
                        .setType(MethodDescriptor.MethodType.UNARY)
                        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Export"))
                        .setRequestMarshaller(marshaller(ExportTraceServiceRequest::parseFrom))
                        .setResponseMarshaller(marshaller(ExportTraceServiceResponse::parseFrom))
                        .build();
        MethodDescriptor<ExportLogsServiceRequest, ExportLogsServiceResponse> exportLogs =
                MethodDescriptor.<ExportLogsServiceRequest, ExportLogsServiceResponse>newBuilder()
                        .setType(MethodDescriptor.MethodType.UNARY)
                        .setFullMethodName(MethodDescriptor.generateFullMethodName(LOGS_SERVICE, "Export"))
                        .setRequestMarshaller(marshaller(ExportLogsServiceRequest::parseFrom))
                        .setResponseMarshaller(marshaller(ExportLogsServiceResponse::parseFrom))
                        .build();
        grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerServiceDefinition.builder(SERVICE)
                        .addMethod(export, ServerCalls.asyncUnaryCall((request, response) -> {
                            keep("grpc", request);
                            response.onNext(ExportTraceServiceResponse.getDefaultInstance());
                            response.onCompleted();
                        }))
                        .build())
                .addService(ServerServiceDefinition.builder(LOGS_SERVICE)
                        .addMethod(exportLogs, ServerCalls.asyncUnaryCall((request, response) -> {
                            keepLogs("grpc", request);
                            response.onNext(ExportLogsServiceResponse.getDefaultInstance());
                            response.onCompleted();
                        }))
                        .build())
                .build()
                .start();
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        post(
                "/v1/traces",
                in -> keep("http/protobuf", ExportTraceServiceRequest.parseFrom(in)),
                ExportTraceServiceResponse.getDefaultInstance());
        post(
                "/v1/logs",
                in -> keepLogs("http/protobuf", ExportLogsServiceRequest.parseFrom(in)),
                ExportLogsServiceResponse.getDefaultInstance());
        http.start();
    }

    /** The gRPC endpoint, as {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} names it. */
    public String grpcEndpoint() {
        return "http://127.0.0.1:" + grpc.getPort();
    }

    /** The HTTP endpoint of traces, as {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} names it for http/protobuf. */
    public String httpTracesEndpoint() {
        return "http://127.0.0.1:" + http.getAddress().getPort() + "/v1/traces";
    }

    public synchronized List<Received> spans() {
        return List.copyOf(spans);
    }

    public synchronized List<ReceivedLog> logs() {
        return List.copyOf(logs);
    }

    private synchronized void keepLogs(String protocol, ExportLogsServiceRequest request) {
        HexFormat hex = HexFormat.of();
        for (ResourceLogs rl : request.getResourceLogsList()) {
            Map<String, String> resource = strings(rl.getResource().getAttributesList());
            for (ScopeLogs sl : rl.getScopeLogsList()) {
                for (LogRecord r : sl.getLogRecordsList()) {
                    logs.add(new ReceivedLog(
                            protocol,
                            hex.formatHex(r.getTraceId().toByteArray()),
                            hex.formatHex(r.getSpanId().toByteArray()),
                            r.getSeverityText(),
                            r.getBody().getStringValue(),
                            strings(r.getAttributesList()),
                            resource));
                }
            }
        }
    }

    private synchronized void keep(String protocol, ExportTraceServiceRequest request) {
        HexFormat hex = HexFormat.of();
        for (ResourceSpans rs : request.getResourceSpansList()) {
            Map<String, String> resource = strings(rs.getResource().getAttributesList());
            for (ScopeSpans ss : rs.getScopeSpansList()) {
                for (Span s : ss.getSpansList()) {
                    spans.add(new Received(
                            protocol,
                            hex.formatHex(s.getTraceId().toByteArray()),
                            hex.formatHex(s.getSpanId().toByteArray()),
                            hex.formatHex(s.getParentSpanId().toByteArray()),
                            s.getName(),
                            s.getKind(),
                            strings(s.getAttributesList()),
                            resource));
                }
            }
        }
    }

    private static Map<String, String> strings(List<KeyValue> attributes) {
        return attributes.stream()
                .collect(Collectors.toMap(
                        KeyValue::getKey,
                        kv -> kv.getValue().hasIntValue()
                                ? Long.toString(kv.getValue().getIntValue())
                                : kv.getValue().getStringValue(),
                        (a, b) -> b));
    }

    private interface Receiver {
        void take(byte[] body) throws IOException;
    }

    /** OTLP/HTTP: a protobuf request body in, a protobuf response out. */
    private void post(String path, Receiver receiver, com.google.protobuf.MessageLite response) {
        http.createContext(path, exchange -> {
            try (exchange) {
                receiver.take(exchange.getRequestBody().readAllBytes());
                byte[] body = response.toByteArray();
                exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
    }

    private interface Parser<T> {
        T parse(InputStream in) throws IOException;
    }

    private static <T extends com.google.protobuf.MessageLite> MethodDescriptor.Marshaller<T> marshaller(
            Parser<T> parser) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(T value) {
                return new ByteArrayInputStream(value.toByteArray());
            }

            @Override
            public T parse(InputStream in) {
                try {
                    return parser.parse(in);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    @Override
    public void close() {
        http.stop(0);
        grpc.shutdownNow();
        try {
            grpc.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
