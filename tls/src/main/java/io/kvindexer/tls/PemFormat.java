package io.kvindexer.tls;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;

/** PEM text (RFC 7468): certificates and PKCS#8 keys in and out, as Kubernetes Secrets and Helidon hold them. */
public final class PemFormat {
    public static final String CERTIFICATE = "CERTIFICATE";
    public static final String PRIVATE_KEY = "PRIVATE KEY";

    private PemFormat() {}

    /** {@code der} as one PEM block of {@code type}, 64 columns. */
    public static String encode(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** A certificate as PEM. */
    public static String certificate(X509Certificate c) {
        try {
            return encode(CERTIFICATE, c.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("a certificate this process holds cannot be encoded", e);
        }
    }

    /** The DER bytes of the first {@code type} block in {@code pem}. */
    public static byte[] decode(String pem, String type) throws GeneralSecurityException {
        String begin = "-----BEGIN " + type + "-----";
        String end = "-----END " + type + "-----";
        int b = pem.indexOf(begin);
        int e = pem.indexOf(end);
        if (b < 0 || e < b) {
            throw new GeneralSecurityException("no " + type + " in PEM text");
        }
        try {
            return Base64.getMimeDecoder().decode(pem.substring(b + begin.length(), e));
        } catch (IllegalArgumentException x) {
            throw new GeneralSecurityException("bad base64 in " + type, x);
        }
    }

    /** Every certificate in the PEM text. */
    public static List<X509Certificate> certificates(String pem) throws CertificateException {
        return certificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    /** Every certificate in the PEM stream. */
    public static List<X509Certificate> certificates(InputStream pem) throws CertificateException {
        return CertificateFactory.getInstance("X.509").generateCertificates(pem).stream()
                .map(X509Certificate.class::cast)
                .toList();
    }
}
