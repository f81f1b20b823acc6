// RUN: python %S/Inputs/softmax_model.py %t.onnx
// RUN: rlx-opt %t.onnx -f 'onnx{input-shapes="x=2x4"}' | filecheck %s
// RUN: rlx-opt %t.onnx -f 'onnx{input-shapes="x=2x4"}' -p canonicalize-broadcast,fuse-elementwise,plan-memory | filecheck %s --check-prefix=PLANNED
// RUN: not rlx-opt %t.onnx 2>&1 | filecheck %s --check-prefix=DYNAMIC

// rlx-opt takes an .onnx file through xDSL's frontend-by-extension registry and
// prints the imported rlx function; input-shapes fixes the dynamic batch size.
// (This file only holds the checks: the model is written by the first RUN line.)

// Values are named after the graph's: inputs and initializers by their names,
// a node's results by its name (else its first output's), `.opN` for the steps
// of a node imported as several ops.

// CHECK-LABEL: func.func @classifier(
// CHECK-SAME: %x: tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK: %w = rlx.constant
// CHECK: %h.op1 = rlx.matmul %x, %w
// CHECK: %h = rlx.add %h.op1, %b
// CHECK: %y = rlx.softmax %h
// CHECK: func.return %y

// PLANNED-LABEL: func.func @classifier(
// PLANNED: rlx.arena_size

// DYNAMIC: rlx-opt: error: input 'x' has a dynamic dimension 'batch': give its shape
