// RUN: python %S/Inputs/softmax_model.py %t.onnx
// RUN: rlx-opt %t.onnx -f 'onnx{input-shapes="x=2x4"}' | filecheck %s
// RUN: rlx-opt %t.onnx -f 'onnx{input-shapes="x=2x4"}' -p canonicalize-broadcast,fuse-elementwise,plan-memory | filecheck %s --check-prefix=PLANNED
// RUN: not rlx-opt %t.onnx 2>&1 | filecheck %s --check-prefix=DYNAMIC

// rlx-opt takes an .onnx file through xDSL's frontend-by-extension registry and
// prints the imported rlx function; input-shapes fixes the dynamic batch size.
// (This file only holds the checks: the model is written by the first RUN line.)

// CHECK-LABEL: func.func @classifier(
// CHECK-SAME: [[X:%[a-zA-Z0-9_]+]]: tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK: [[W:%[a-zA-Z0-9_]+]] = rlx.constant
// CHECK: [[H:%[a-zA-Z0-9_]+]] = rlx.matmul [[X]], [[W]]
// CHECK: rlx.softmax
// CHECK: func.return

// PLANNED-LABEL: func.func @classifier(
// PLANNED: rlx.arena_size

// DYNAMIC: rlx-opt: error: input 'x' has a dynamic dimension 'batch': give its shape
