// orgsync/no-spread-arguments: a local ESLint rule (issue 31 point 1). Spreading an array into a call's arguments
// (`Math.max(...xs)`, `list.push(...xs)`, `new Foo(...xs)`) or passing one through `fn.apply(this, xs)` /
// `Reflect.apply(fn, this, xs)` puts every element on the call stack: past some 100,000 elements the call throws
// "Maximum call stack size exceeded", which is how `orgsync plan` failed at 200,000 members. Spreads inside an array
// or object literal (`[...a, ...b]`, `{ ...o }`) are not calls and stay allowed, as does spreading an array literal
// written out in the code (`f(...['a', 'b'])`, bounded by what is written). A list bounded for another reason
// (a prepared statement's few parameters, a logger hook's arguments) takes an eslint-disable comment saying why.

const MESSAGE_SPREAD =
  'Spreading an array into call arguments ({{callee}}(...)) puts every element on the call stack: a large array throws "Maximum call stack size exceeded". Loop instead (for ... of, or reduce); if the list is bounded, say why in an eslint-disable comment.';
const MESSAGE_APPLY =
  'Passing an array through {{callee}} puts every element on the call stack: a large array throws "Maximum call stack size exceeded". Loop instead; if the list is bounded, say why in an eslint-disable comment.';

/** A short source name for the callee, for the message (`Math.max`, `rows.push`, `Set`). */
function calleeText(node, sourceCode) {
  const text = sourceCode.getText(node.callee);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** An array literal written out in the code, without spreads of its own: bounded by what is written. */
const isWrittenOutArray = (node) => node.type === 'ArrayExpression' && node.elements.every((e) => e === null || e.type !== 'SpreadElement');

/**
 * `Reflect.apply(fn, thisArg, list)`, or `fn.apply(thisArg, list)` in the forms that mean Function.prototype.apply:
 * the receiver `this`, `null` or `undefined` (`method.apply(this, args)`), the function's own object
 * (`Math.max.apply(Math, xs)`, `list.push.apply(list, xs)`), or a prototype's method (`Array.prototype.push.apply`).
 * A method that merely is called apply (`rule.apply(member, ctx)`) is left alone: without types it cannot be told apart.
 */
function applyCall(node, sourceCode) {
  const callee = node.callee;
  if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier' || callee.property.name !== 'apply') return false;
  if (callee.object.type === 'Identifier' && callee.object.name === 'Reflect') return node.arguments.length >= 3 && !isWrittenOutArray(node.arguments[2]);
  if (node.arguments.length < 2 || isWrittenOutArray(node.arguments[1])) return false;
  const receiver = node.arguments[0];
  const fn = callee.object;
  const thisLike = receiver.type === 'ThisExpression' || (receiver.type === 'Literal' && receiver.value === null) || (receiver.type === 'Identifier' && receiver.name === 'undefined');
  const ownObject = fn.type === 'MemberExpression' && sourceCode.getText(fn.object) === sourceCode.getText(receiver);
  const prototypeMethod = fn.type === 'MemberExpression' && fn.object.type === 'MemberExpression' && !fn.object.computed && fn.object.property.type === 'Identifier' && fn.object.property.name === 'prototype';
  return thisLike || ownObject || prototypeMethod;
}

/** @type {import('eslint').Rule.RuleModule} */
export const noSpreadArgumentsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'No array spread into call arguments and no Function.prototype.apply with an array: a large one overflows the call stack' },
    schema: [],
    messages: { spread: MESSAGE_SPREAD, apply: MESSAGE_APPLY },
  },
  create(context) {
    const sourceCode = context.sourceCode ?? context.getSourceCode();
    const check = (node) => {
      for (const arg of node.arguments) {
        if (arg.type === 'SpreadElement' && !isWrittenOutArray(arg.argument)) {
          context.report({ node: arg, messageId: 'spread', data: { callee: calleeText(node, sourceCode) } });
        }
      }
      if (node.type === 'CallExpression' && applyCall(node, sourceCode)) context.report({ node, messageId: 'apply', data: { callee: calleeText(node, sourceCode) } });
    };
    return { CallExpression: check, NewExpression: check };
  },
};
