package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsonFormatVisitors.JsonFormatVisitorWrapper;
import com.fasterxml.jackson.databind.ser.ContextualSerializer;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;

/**
 * Reads the {@code spec} of a custom resource without ever failing the read of the resource: a spec that cannot be
 * read (a known field of another type, a malformed quantity) becomes a placeholder that names the field and the
 * problem ({@link UnknownFields#unreadable()}). An informer reads every object of a kind in one list: one object it
 * cannot read would otherwise stop it, and with it the operator's work on every other object of that kind. The
 * reconcilers report the placeholder on its object and touch nothing else. {@link Writer} writes the placeholder
 * back as it was written, so the copies JOSDK makes of a resource stay unreadable, and the schema is the spec's own.
 */
public final class LenientSpec extends LenientReader<UnknownFields> {

    public LenientSpec() {
        this(null);
    }

    private LenientSpec(JavaType type) {
        super(type);
    }

    @Override
    LenientSpec forType(JavaType type) {
        return new LenientSpec(type);
    }

    @Override
    UnknownFields unreadable(JsonNode written, Exception e) throws IOException {
        UnknownFields placeholder = placeholder();
        placeholder.markUnreadable(describe("spec", e), written);
        return placeholder;
    }

    private UnknownFields placeholder() throws IOException {
        try {
            return (UnknownFields) type.getRawClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
            throw new IOException(
                    "cannot create a placeholder " + type.getRawClass().getSimpleName(), cause);
        }
    }

    /** {@code spec.resources.limits.cpu: <what Jackson found wrong>}: the path first, one line. */
    static String describe(String root, Exception e) {
        StringBuilder path = new StringBuilder(root);
        String problem = e.getMessage();
        if (e instanceof JsonMappingException m) {
            for (JsonMappingException.Reference r : m.getPath()) {
                if (r.getFieldName() != null) {
                    path.append('.').append(r.getFieldName());
                } else if (r.getIndex() >= 0) {
                    path.append('[').append(r.getIndex()).append(']');
                }
            }
            problem = m.getOriginalMessage();
            if (m.getCause() != null && m.getCause() != m && m.getCause().getMessage() != null) {
                problem = m.getCause().getMessage();
            }
        }
        String line =
                problem == null ? e.getClass().getSimpleName() : problem.strip().replaceAll("\\s*\\R\\s*", " ");
        return path + ": " + (line.length() > 300 ? line.substring(0, 300) + "..." : line);
    }

    /** Writes a spec as usual, and a placeholder as it was written; the schema is the spec type's own. */
    public static final class Writer extends JsonSerializer<UnknownFields> implements ContextualSerializer {
        private final JavaType type;

        public Writer() {
            this(null);
        }

        private Writer(JavaType type) {
            this.type = type;
        }

        @Override
        public JsonSerializer<?> createContextual(SerializerProvider prov, BeanProperty property) {
            return new Writer(property == null ? null : property.getType());
        }

        @Override
        public void serialize(UnknownFields value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            if (value.unreadable() != null) {
                gen.writeTree(value.written());
            } else {
                provider.findValueSerializer(value.getClass()).serialize(value, gen, provider);
            }
        }

        @Override
        public void acceptJsonFormatVisitor(JsonFormatVisitorWrapper visitor, JavaType typeHint)
                throws JsonMappingException {
            JavaType t = type != null ? type : typeHint;
            visitor.getProvider().findValueSerializer(t).acceptJsonFormatVisitor(visitor, t);
        }
    }
}
