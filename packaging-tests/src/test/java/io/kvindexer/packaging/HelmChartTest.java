package io.kvindexer.packaging;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HelmChartTest {

    @Test
    void lintStrictIsClean() {
        LintResult result = new Helm(RepoFiles.chart()).lint().strict().call();
        assertThat(result.isFailed()).as("lint messages: %s", result.getMessages()).isFalse();
        System.out.println(result.getMessages());
    }

    @Test
    void defaultRender() {
        String out = new Helm(RepoFiles.chart()).template().withName("kvio").withNamespace("kv-system").withKubeVersion("1.31.0").call();
        System.out.println(out);
        List<HasMetadata> objs = RepoFiles.objects(out);
        objs.forEach(o -> System.out.println(o.getClass().getSimpleName() + " " + o.getMetadata().getName()));
    }
}
