package io.kvindexer.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.junit.jupiter.api.Test;

class CaTrustTest {

    @Test
    void ipLiteralsAreTellingFromHostNames() {
        assertThat(List.of("10.1.2.3", "[fd00::1]", "fd00::1")).allMatch(CaTrust::isIpLiteral);
        assertThat(Arrays.asList("kvi-0.kvi.ns.svc", "localhost", null)).noneMatch(CaTrust::isIpLiteral);
    }

    @Test
    void aPemWithoutCertificatesIsRefused() {
        assertThatThrownBy(() -> CaTrust.sslContext(new ByteArrayInputStream(new byte[0])))
                .isInstanceOf(GeneralSecurityException.class)
                .hasMessageContaining("no certificate");
    }

    @Test
    void aCertificateSurvivesPemBothWaysAndMakesAContext() throws Exception {
        var keys = Certificates.ecKeys();
        var ca = Certificates.selfSignedCa(new X500Name("CN=test"), keys, Instant.now(), Duration.ofHours(1));
        String pem = PemFormat.certificate(ca);

        assertThat(pem).startsWith("-----BEGIN CERTIFICATE-----\n").endsWith("-----END CERTIFICATE-----\n");
        assertThat(PemFormat.certificates(pem)).containsExactly(ca);
        assertThat(PemFormat.decode(pem, PemFormat.CERTIFICATE)).isEqualTo(ca.getEncoded());
        assertThat(CaTrust.sslContext(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
                        .getProtocol())
                .isEqualTo("TLS");
        ca.verify(keys.getPublic());
    }

    @Test
    void aMissingBlockIsNamed() {
        assertThatThrownBy(() -> PemFormat.decode("nothing here", PemFormat.PRIVATE_KEY))
                .isInstanceOf(GeneralSecurityException.class)
                .hasMessage("no PRIVATE KEY in PEM text");
    }
}
