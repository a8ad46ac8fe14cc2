package io.kvindexer.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import org.bouncycastle.asn1.x500.X500Name;
import org.junit.jupiter.api.Test;

class CaTrustTest {

    @Test
    void ipLiteralsAreTellingFromHostNames() {
        assertThat(CaTrust.isIpLiteral("10.1.2.3")).isTrue();
        assertThat(CaTrust.isIpLiteral("[fd00::1]")).isTrue();
        assertThat(CaTrust.isIpLiteral("fd00::1")).isTrue();
        assertThat(CaTrust.isIpLiteral("kvi-0.kvi.ns.svc")).isFalse();
        assertThat(CaTrust.isIpLiteral("localhost")).isFalse();
        assertThat(CaTrust.isIpLiteral(null)).isFalse();
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
