package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LabelSelectorsTest {

    @Test
    void matchLabelsAndExpressionsMustAllHold() {
        LabelSelector s = new LabelSelectorBuilder()
                .withMatchLabels(Map.of("app", "vllm"))
                .addNewMatchExpression()
                .withKey("tier")
                .withOperator("In")
                .withValues("a", "b")
                .endMatchExpression()
                .addNewMatchExpression()
                .withKey("canary")
                .withOperator("DoesNotExist")
                .endMatchExpression()
                .build();
        assertThat(LabelSelectors.matches(s, Map.of("app", "vllm", "tier", "a")))
                .isTrue();
        assertThat(LabelSelectors.matches(s, Map.of("app", "vllm", "tier", "c")))
                .isFalse();
        assertThat(LabelSelectors.matches(s, Map.of("app", "vllm", "tier", "a", "canary", "x")))
                .isFalse();
        assertThat(LabelSelectors.matches(s, Map.of("tier", "a"))).isFalse();
    }

    @Test
    void emptySelectsAllAndNullSelectsNothing() {
        assertThat(LabelSelectors.matches(new LabelSelector(), Map.of("x", "y")))
                .isTrue();
        assertThat(LabelSelectors.matches(null, Map.of("x", "y"))).isFalse();
    }

    @Test
    void badOperatorsAreReported() {
        LabelSelector s = new LabelSelectorBuilder()
                .addNewMatchExpression()
                .withKey("k")
                .withOperator("Like")
                .endMatchExpression()
                .build();
        assertThat(LabelSelectors.validate(s)).contains("unknown operator Like");
        LabelSelector noValues = new LabelSelectorBuilder()
                .addNewMatchExpression()
                .withKey("k")
                .withOperator("In")
                .endMatchExpression()
                .build();
        assertThat(LabelSelectors.validate(noValues)).contains("needs values");
    }
}
