package io.kvindexer.operator.reconcile;

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

    /** What the API server refuses in a label selector (a KvWorker's is also its KvIndexer's NetworkPolicy's). */
    @Test
    void keysAndValuesNoLabelCanHaveAreReported() {
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app.kubernetes.io/name", "vllm", "tier", "", "a_b.c-d", "X.y_z-1"))
                        .build()))
                .isNull();
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app", "vllm llama"))
                        .build()))
                .isEqualTo("spec.selector.matchLabels.app: \"vllm llama\" is not a label value (at most 63 letters,"
                        + " digits, '-', '_' or '.', beginning and ending with a letter or digit)");
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app", "v".repeat(64)))
                        .build()))
                .contains("is not a label value");
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("Example.com/app", "vllm"))
                        .build()))
                .startsWith("spec.selector.matchLabels: \"Example.com/app\" is not a label key");
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .addNewMatchExpression()
                        .withKey("-app")
                        .withOperator("DoesNotExist")
                        .endMatchExpression()
                        .build()))
                .startsWith("spec.selector.matchExpressions: \"-app\" is not a label key");
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .addNewMatchExpression()
                        .withKey("app")
                        .withOperator("Exists")
                        .withValues("vllm")
                        .endMatchExpression()
                        .build()))
                .isEqualTo("spec.selector.matchExpressions: Exists on app takes no values, got [vllm]");
        assertThat(LabelSelectors.validate(new LabelSelectorBuilder()
                        .addNewMatchExpression()
                        .withKey("app")
                        .withOperator("In")
                        .withValues("vllm", "sg lang")
                        .endMatchExpression()
                        .build()))
                .startsWith("spec.selector.matchExpressions.app: \"sg lang\" is not a label value");
    }
}
