# Loaded by moto_server's Python at start-up (motoserver.Start puts this
# file's directory first on PYTHONPATH). It replaces moto's
# TransactWriteItems with one that behaves like DynamoDB's:
#
#   - every condition is judged against the state before the transaction,
#     and a transaction with a failed condition writes nothing;
#   - a write that fails while the transaction applies is undone in place
#     (the items it touched and their stream records), instead of putting
#     back a deep copy of the whole table taken when the transaction began.
#
# moto's own version (moto/dynamodb/models/__init__.py) copies the whole
# table, stream history included, on every transaction (slower with every
# write ever made), writes before it judges later conditions, and on a
# failure swaps the copy in: the stream's readers keep the old shard, which
# holds the records of writes that never happened and never gets another.
# Concurrency is the proxy's job (isolate.go): it runs each write alone.
#
# It also sets two of AWS's limits where moto's differ (_patch_limits).
import os
import sys


def _patch():
    import copy

    from moto.dynamodb import exceptions as ex
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType

    def key_of(table, op_type, op):
        if op_type == "Put":
            attrs = op["Item"]
            key = {table.hash_key_attr: attrs[table.hash_key_attr]}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = attrs[table.range_key_attr]
            return key
        return op["Key"]

    def slot(table, key):
        h = DynamoType(key[table.hash_key_attr])
        r = DynamoType(key[table.range_key_attr]) if table.range_key_attr is not None else None
        return h, r

    def restore(table, h, r, item):
        if r is not None:
            if item is None:
                table.items.get(h, {}).pop(r, None)
            else:
                table.items[h][r] = item
        elif item is None:
            table.items.pop(h, None)
        else:
            table.items[h] = item

    def transact_write_items(self, transact_items):
        if len(transact_items) > 100:
            raise ex.TooManyTransactionsException()
        ops, seen, reasons, failed = [], set(), [], False
        for item in transact_items:
            if len(list(item.keys())) > 1:
                raise ex.TransactWriteSingleOpException
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise ex.MockValidationException("Unsupported transaction operation")
            table = self.get_table(op["TableName"])
            key = key_of(table, op_type, op)
            ident = (op["TableName"], str(dict(sorted(key.items()))))
            if ident in seen:
                raise ex.MultipleTransactionsException()
            seen.add(ident)
            ops.append((op_type, op, table, key))
            current = self.get_item(op["TableName"], key)
            cond = op.get("ConditionExpression")
            if cond is not None and not get_filter_expression(
                cond, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
            ).expr(current):
                old = None
                if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                    old = current.to_json()["Attributes"]
                reasons.append(("ConditionalCheckFailed", "The conditional request failed", old))
                failed = True
            else:
                reasons.append((None, None, None))
        if failed:
            raise ex.TransactionCanceledException(reasons)

        # Apply. Keep what is needed to undo: the touched items as they were
        # and the length of each stream.
        undo, streams = [], {}
        for op_type, op, table, key in ops:
            h, r = slot(table, key)
            undo.append((table, h, r, copy.deepcopy(table.get_item(h, r))))
            if table.stream_shard is not None and id(table) not in streams:
                streams[id(table)] = (table.stream_shard, len(table.stream_shard.items))

        def rollback():
            for table, h, r, item in reversed(undo):
                restore(table, h, r, item)
            for shard, n in streams.values():
                del shard.items[n:]

        for i, (op_type, op, table, key) in enumerate(ops):
            names = op.get("ExpressionAttributeNames")
            values = op.get("ExpressionAttributeValues")
            try:
                if op_type == "Put":
                    self.put_item(op["TableName"], op["Item"], expression_attribute_names=names,
                                  expression_attribute_values=values)
                elif op_type == "Delete":
                    self.delete_item(op["TableName"], key, expression_attribute_names=names,
                                     expression_attribute_values=values)
                elif op_type == "Update":
                    self.update_item(op["TableName"], key, update_expression=op["UpdateExpression"],
                                     expression_attribute_names=names, expression_attribute_values=values)
            except (ex.MultipleTransactionsException, ex.MockValidationException):
                rollback()
                raise
            except Exception as e:  # noqa: BLE001 - reported as the item's reason, as moto does
                rollback()
                reasons = [(None, None, None)] * len(ops)
                reasons[i] = (type(e).__name__, str(e), None)
                raise ex.TransactionCanceledException(reasons)

    DynamoDBBackend.transact_write_items = transact_write_items


def _patch_limits():
    # AWS's limits where moto's differ; the proxy keeps the rest (limits_*.go).
    # TransactGetItems takes up to 100 items (moto: 25).
    from moto.dynamodb import responses as dynamodb_responses
    from moto.sqs.exceptions import ReceiptHandleIsInvalid
    from moto.sqs.models import SQSBackend

    dynamodb_responses.TRANSACTION_MAX_ITEMS = 100

    # A message's visibility may end up to 12 hours after its receive; moto
    # counts from its send, refusing what SQS accepts. The proxy, which sees
    # the receives, checks it (limits_sqs.go).
    def change_message_visibility(self, queue_name, receipt_handle, visibility_timeout):
        queue = self.get_queue(queue_name)
        for message in queue._messages:
            if message.had_receipt_handle(receipt_handle):
                message.change_visibility(visibility_timeout)
                if message.visible and message in queue.pending_messages:
                    queue.pending_messages.remove(message)
                return
        raise ReceiptHandleIsInvalid

    SQSBackend.change_message_visibility = change_message_visibility


for _name, _fn in (("transaction", _patch), ("limits", _patch_limits)):
    try:
        _fn()
    except Exception as e:  # noqa: BLE001 - moto still runs, unpatched
        sys.stderr.write("motoserver: %s patch not applied: %r\n" % (_name, e))

# Hand over to a sitecustomize further down the path, if there is one.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["sitecustomize"]
try:
    import sitecustomize  # noqa: F401
except ImportError:
    pass
