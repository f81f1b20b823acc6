func.func @two_forms(%q: tensor<1x256x2x16xf32>, %g: tensor<1x256x2xf32>) -> (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>) {
  %a = rlx.gated_delta_net %q, %q, %q, %g, %g {state_size = 16 : i64, rlx.tuning = {gdn_chunked = 0 : i64}} : (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2xf32>, tensor<1x256x2xf32>) -> tensor<1x256x2x16xf32>
  %b = rlx.gated_delta_net %q, %q, %q, %g, %g {state_size = 16 : i64} : (tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>, tensor<1x256x2xf32>, tensor<1x256x2xf32>) -> tensor<1x256x2x16xf32>
  func.return %a, %b : tensor<1x256x2x16xf32>, tensor<1x256x2x16xf32>
}
