package io.kvindexer.indexer.event;

import java.util.function.Supplier;

/**
 * What the two readers of one event's fields ({@link FieldReader}, {@link MultimodalReader}) share: the cursor they
 * read from, the {@link EventFields} they fill, and where the event is, for their error messages.
 */
abstract class FieldsAtCursor {

    final MsgpackCursor cursor;
    final EventFields fields;
    final Supplier<String> where;

    FieldsAtCursor(MsgpackCursor cursor, EventFields fields, Supplier<String> where) {
        this.cursor = cursor;
        this.fields = fields;
        this.where = where;
    }
}
