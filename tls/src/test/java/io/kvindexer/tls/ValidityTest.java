package io.kvindexer.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.bouncycastle.asn1.x500.X500Name;
import org.junit.jupiter.api.Test;

class ValidityTest {

    @Test
    void namesTheDateThatWasMissed() throws Exception {
        KeyPair keys = Certificates.ecKeys();
        Instant issued = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        // valid from a minute before issued (Certificates.builder) for an hour after it
        X509Certificate cert =
                Certificates.selfSignedCa(new X500Name("CN=validity"), keys, issued, Duration.ofHours(1));
        Instant notAfter = issued.plus(Duration.ofHours(1));
        Instant notBefore = issued.minusSeconds(60);

        assertThat(Validity.problem(cert, issued)).isNull();
        assertThat(Validity.problem(cert, notAfter)).isNull();
        assertThat(Validity.problem(cert, notBefore)).isNull();
        assertThat(Validity.problem(cert, notAfter.plusSeconds(1))).isEqualTo("expired on " + notAfter + " (notAfter)");
        assertThat(Validity.problem(cert, notBefore.minusSeconds(1)))
                .isEqualTo("is not valid before " + notBefore + " (notBefore; notAfter " + notAfter + ")");
    }
}
