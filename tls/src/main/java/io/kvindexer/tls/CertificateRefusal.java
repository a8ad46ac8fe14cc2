package io.kvindexer.tls;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertPathValidatorException.BasicReason;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Why a TLS client refused the server's certificate, read from the handshake failure's causes. The JDK's message
 * says "PKIX path ..." for an expired certificate as for an unknown CA, which sends the reader to the wrong file;
 * the indexer (peer recovery) and the operator (calls to replicas) each word the reason and its fix for their
 * reader, from this one reading.
 */
public enum CertificateRefusal {
    /** The certificate, or one of its chain, is past its end date. */
    EXPIRED,
    /** The certificate, or one of its chain, starts later (or a clock is wrong). */
    NOT_YET_VALID,
    /** The certificate does not name the host the client asked for. */
    OTHER_HOST,
    /** No path from the certificate to a CA the client trusts. */
    UNTRUSTED_CA;

    /**
     * The refusal behind {@code failure} (an {@link SSLHandshakeException}, or an exception caused by one); null
     * when it is no handshake failure, or one for another reason (no common protocol, a reset).
     */
    public static CertificateRefusal of(Throwable failure) {
        SSLHandshakeException handshake = null;
        for (Throwable t = failure; t != null && handshake == null; t = t.getCause()) {
            if (t instanceof SSLHandshakeException h) {
                handshake = h;
            }
        }
        if (handshake == null) {
            return null;
        }
        boolean noPath = String.valueOf(handshake.getMessage()).contains("PKIX");
        for (Throwable t = handshake; t != null; t = t.getCause()) {
            if (t instanceof CertificateExpiredException
                    || t instanceof CertPathValidatorException v && v.getReason() == BasicReason.EXPIRED) {
                return EXPIRED;
            }
            if (t instanceof CertificateNotYetValidException
                    || t instanceof CertPathValidatorException v && v.getReason() == BasicReason.NOT_YET_VALID) {
                return NOT_YET_VALID;
            }
            String message = String.valueOf(t.getMessage());
            if (t instanceof CertificateException
                    && (message.startsWith("No subject alternative") || message.startsWith("No name matching"))) {
                return OTHER_HOST;
            }
            noPath |= t instanceof CertPathBuilderException;
        }
        return noPath ? UNTRUSTED_CA : null;
    }
}
