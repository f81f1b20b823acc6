// A bias add, an exact GELU and a residual scale: one fused kernel after the
// default pipeline. Run it:  rlx-run examples/bias_gelu.mlir --print-ir \
//   --input x.npy --input bias.npy
func.func @bias_gelu(%x: tensor<256x1024xf32>, %bias: tensor<1024xf32>) -> tensor<256x1024xf32> {
  %half = rlx.constant dense<0.5> : tensor<f32>
  %b = rlx.expand %bias : (tensor<1024xf32>) -> tensor<256x1024xf32>
  %h = rlx.add %x, %b : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %g = rlx.gelu %h : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %s = rlx.mul %x, %half : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256x1024xf32>
  %y = rlx.add %g, %s : (tensor<256x1024xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
  func.return %y : tensor<256x1024xf32>
}
