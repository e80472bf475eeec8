#include "../internal/common.h"

// Small-batch fully connected layer in plain C: one dot product per (image, output row).

void anvil_dense_rows_scalar(const float *w, const float *x, const float *bias, float *y, int inputs, int outputs,
                             int batch, int o0, int o1, float lo, float hi) {
    for (int b = 0; b < batch; b++) {
        const float *xb = x + (size_t)b * inputs;
        for (int o = o0; o < o1; o++) {
            const float *wo = w + (size_t)o * inputs;
            float sum = 0;
            for (int k = 0; k < inputs; k++) sum += wo[k] * xb[k];
            y[(size_t)b * outputs + o] = anvil_clamp(sum + (bias ? bias[o] : 0.0f), lo, hi);
        }
    }
}
