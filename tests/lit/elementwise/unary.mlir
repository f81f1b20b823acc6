// RUN: rlx-opt %s | filecheck %s
// RUN: rlx-opt %s | rlx-opt | filecheck %s

// Every unary op over floats prints back in its custom form: one line per op, its
// CHECK-NEXT on the same line (the printer drops comments), so a new op is one line.

// CHECK-LABEL: func.func @unary(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x3xf32>
func.func @unary(%x: tensor<2x3xf32>) {
  %relu = rlx.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.relu [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %gelu = rlx.gelu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.gelu [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %gelu_approx = rlx.gelu_approx %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.gelu_approx [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %silu = rlx.silu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.silu [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sigmoid = rlx.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.sigmoid [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %tanh = rlx.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.tanh [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %exp = rlx.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.exp [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log = rlx.log %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.log [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sqrt = rlx.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.sqrt [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rsqrt = rlx.rsqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.rsqrt [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %neg = rlx.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.neg [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %abs = rlx.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.abs [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %round = rlx.round %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.round [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sin = rlx.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.sin [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %cos = rlx.cos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.cos [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %tan = rlx.tan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.tan [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %atan = rlx.atan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.atan [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %recip = rlx.recip %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.recip [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %floor = rlx.floor %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.floor [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %ceil = rlx.ceil %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.ceil [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sign = rlx.sign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.sign [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %softplus = rlx.softplus %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.softplus [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %elu = rlx.elu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.elu [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %erf = rlx.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.erf [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %hard_swish = rlx.hard_swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.hard_swish [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %hard_sigmoid = rlx.hard_sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.hard_sigmoid [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %mish = rlx.mish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.mish [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %softsign = rlx.softsign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.softsign [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %log_sigmoid = rlx.log_sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>  // CHECK-NEXT: rlx.log_sigmoid [[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}
