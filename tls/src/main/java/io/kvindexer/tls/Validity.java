package io.kvindexer.tls;

import java.security.cert.X509Certificate;
import java.time.Instant;

/**
 * Whether a certificate is inside its validity period. The JDK's {@code checkValidity} throws without the dates;
 * an operator who reads the log wants the date that was missed, to tell a stale Secret from a clock that is off.
 */
public final class Validity {

    private Validity() {}

    /**
     * Null when {@code cert} is valid at {@code now}; else what is wrong in words with its dates, e.g. "expired on
     * 2026-12-05T01:00:00Z (notAfter)" or "is not valid before 2026-12-09T01:00:00Z (notBefore; notAfter ...)".
     */
    public static String problem(X509Certificate cert, Instant now) {
        Instant notBefore = cert.getNotBefore().toInstant();
        Instant notAfter = cert.getNotAfter().toInstant();
        if (now.isAfter(notAfter)) {
            return "expired on " + notAfter + " (notAfter)";
        }
        if (now.isBefore(notBefore)) {
            return "is not valid before " + notBefore + " (notBefore; notAfter " + notAfter + ")";
        }
        return null;
    }
}
