package iampolicy

import (
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// testTemplate has one function per case family; its names resolve as a
// local run names them (Local).
const testTemplate = `
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: pk, KeyType: HASH}, {AttributeName: sk, KeyType: RANGE}]
      GlobalSecondaryIndexes:
        - IndexName: ByDue
          KeySchema: [{AttributeName: shard, KeyType: HASH}]
  Work:
    Type: AWS::SQS::Queue
  WorkDLQ:
    Type: AWS::SQS::Queue
  Api:
    Type: AWS::ApiGatewayV2::Api
  Keys:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:Scan, dynamodb:BatchGetItem]
              Resource: !GetAtt Table.Arn
              Condition:
                ForAllValues:StringLike:
                  dynamodb:LeadingKeys: ["ROOM#*", "CHAN#*"]
            - Effect: Allow
              Action: [dynamodb:PutItem]
              Resource: !GetAtt Table.Arn
              Condition:
                ForAnyValue:StringEquals:
                  dynamodb:LeadingKeys: ["ROOM#1"]
            - Effect: Allow
              Action: [dynamodb:DeleteItem]
              Resource: !GetAtt Table.Arn
              Condition:
                StringLike:
                  dynamodb:LeadingKeys: ["ROOM#*"]
            - Effect: Deny
              Action: [dynamodb:*]
              Resource: !GetAtt Table.Arn
              Condition:
                ForAnyValue:StringLike:
                  dynamodb:LeadingKeys: ["ROOM#secret"]
  Index:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement:
            - Effect: Allow
              Action: [dynamodb:Query]
              Resource: !Sub "${Table.Arn}/index/ByDue"
            - Effect: Allow
              Action: [sqs:SendMessage]
              Resource: [!GetAtt Work.Arn]
            - Effect: Allow
              Action: [execute-api:ManageConnections]
              Resource: !Sub "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${Api}/live/POST/@connections/*"
  Consumer:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Work.Arn
        Changes:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            DestinationConfig:
              OnFailure:
                Type: SQS
                Destination: !GetAtt WorkDLQ.Arn
  Templated:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - DynamoDBReadPolicy:
            TableName: !Ref Table
        - SQSSendMessagePolicy:
            QueueName: !GetAtt Work.QueueName
`

func parseSet(t *testing.T, src string) *Set {
	t.Helper()
	tmpl, err := samtemplate.Parse([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	s, err := FromTemplate(tmpl, DefaultLocal)
	if err != nil {
		t.Fatalf("policies: %v", err)
	}
	return s
}

func TestEvaluate(t *testing.T) {
	s := parseSet(t, testTemplate)
	table, index := s.TableARN(), s.IndexARN("ByDue")
	work, dlq := s.QueueARN("Work"), s.QueueARN("WorkDLQ")
	for _, tc := range []struct {
		name, function string
		r              Request
		want           Decision
	}{
		{"allowed prefix", "Keys", Request{"dynamodb:GetItem", table, []string{"ROOM#1"}}, Allow},
		{"action names ignore case", "Keys", Request{"DynamoDB:getitem", table, []string{"ROOM#1"}}, Allow},
		{"other prefix", "Keys", Request{"dynamodb:GetItem", table, []string{"WS#1"}}, ImplicitDeny},
		{"action not granted", "Keys", Request{"dynamodb:UpdateItem", table, []string{"ROOM#1"}}, ImplicitDeny},
		{"ForAllValues: every key matches", "Keys", Request{"dynamodb:BatchGetItem", table, []string{"ROOM#1", "CHAN#2"}}, Allow},
		{"ForAllValues: one key does not", "Keys", Request{"dynamodb:BatchGetItem", table, []string{"ROOM#1", "WS#2"}}, ImplicitDeny},
		{"ForAllValues on no keys (a Scan) is true", "Keys", Request{"dynamodb:Scan", table, nil}, Allow},
		{"ForAnyValue on no keys is false", "Keys", Request{"dynamodb:PutItem", table, nil}, ImplicitDeny},
		{"ForAnyValue: one key matches", "Keys", Request{"dynamodb:PutItem", table, []string{"WS#1", "ROOM#1"}}, Allow},
		{"StringEquals is exact", "Keys", Request{"dynamodb:PutItem", table, []string{"ROOM#10"}}, ImplicitDeny},
		{"single-valued StringLike", "Keys", Request{"dynamodb:DeleteItem", table, []string{"ROOM#9"}}, Allow},
		{"single-valued on an absent key is false", "Keys", Request{"dynamodb:DeleteItem", table, nil}, ImplicitDeny},
		{"explicit deny wins", "Keys", Request{"dynamodb:GetItem", table, []string{"ROOM#secret"}}, ExplicitDeny},
		{"table grant does not reach an index", "Keys", Request{"dynamodb:GetItem", table + "/index/ByDue", []string{"ROOM#1"}}, ImplicitDeny},
		{"index grant", "Index", Request{"dynamodb:Query", index, []string{"3"}}, Allow},
		{"index grant does not reach the table", "Index", Request{"dynamodb:Query", table, []string{"CHAN#1"}}, ImplicitDeny},
		{"another index", "Index", Request{"dynamodb:Query", s.IndexARN("Other"), nil}, ImplicitDeny},
		{"queue", "Index", Request{"sqs:SendMessage", work, nil}, Allow},
		{"a queue whose name only starts alike", "Index", Request{"sqs:SendMessage", dlq, nil}, ImplicitDeny},
		{"another region", "Index", Request{"sqs:SendMessage", strings.Replace(work, "us-east-1", "eu-west-1", 1), nil}, ImplicitDeny},
		{"!Sub with a pseudo parameter and an API id", "Index", Request{"execute-api:ManageConnections", "arn:aws:execute-api:us-east-1:123456789012:abc123/live/POST/@connections/Zx1=", nil}, Allow},
		{"another method of the Management API", "Index", Request{"execute-api:ManageConnections", "arn:aws:execute-api:us-east-1:123456789012:abc123/live/DELETE/@connections/Zx1=", nil}, ImplicitDeny},
		{"SQS event: the poller's actions", "Consumer", Request{"sqs:ReceiveMessage", work, nil}, Allow},
		{"SQS event: on its queue only", "Consumer", Request{"sqs:ReceiveMessage", dlq, nil}, ImplicitDeny},
		{"SQS event: not sending", "Consumer", Request{"sqs:SendMessage", work, nil}, ImplicitDeny},
		{"stream event: records", "Consumer", Request{"dynamodb:GetRecords", s.StreamARN("2026-11-25T10:00:00.000"), nil}, Allow},
		{"stream event: not the table", "Consumer", Request{"dynamodb:GetItem", table, []string{"CHAN#1"}}, ImplicitDeny},
		{"stream event: list streams", "Consumer", Request{"dynamodb:ListStreams", "*", nil}, Allow},
		{"stream event: on-failure destination", "Consumer", Request{"sqs:SendMessage", dlq, nil}, Allow},
		{"SAM template: read", "Templated", Request{"dynamodb:Query", index, []string{"x"}}, Allow},
		{"SAM template: no write", "Templated", Request{"dynamodb:PutItem", table, []string{"x"}}, ImplicitDeny},
		{"SAM template: send (SendMessage*)", "Templated", Request{"sqs:SendMessageBatch", work, nil}, Allow},
		{"unknown function", "Nobody", Request{"dynamodb:GetItem", table, []string{"ROOM#1"}}, ImplicitDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Evaluate(tc.function, tc.r); got != tc.want {
				t.Fatalf("%s %+v: got %v, want %v", tc.function, tc.r, got, tc.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	s := parseSet(t, testTemplate)
	r := Request{"dynamodb:GetItem", s.TableARN(), []string{"ROOM#1"}}
	p := s.Functions["Keys"]
	if got := p.Evaluate(r); got != Allow {
		t.Fatalf("before: got %v, want Allow", got)
	}
	if got := p.Without("dynamodb:GetItem").Evaluate(r); got != ImplicitDeny {
		t.Fatalf("without GetItem: got %v, want ImplicitDeny", got)
	}
	if got := p.Evaluate(r); got != Allow {
		t.Fatalf("Without changed the policy: got %v, want Allow", got)
	}
}

// TestRefusesWhatItDoesNotImplement: an unknown operator, key, element or
// policy template is an error, never a silent allow or deny.
func TestRefusesWhatItDoesNotImplement(t *testing.T) {
	for name, policy := range map[string]string{
		"operator":        "- Statement: [{Effect: Allow, Action: [dynamodb:GetItem], Resource: '*', Condition: {StringNotLike: {dynamodb:LeadingKeys: [x]}}}]",
		"IfExists":        "- Statement: [{Effect: Allow, Action: [dynamodb:GetItem], Resource: '*', Condition: {StringLikeIfExists: {dynamodb:LeadingKeys: [x]}}}]",
		"key":             "- Statement: [{Effect: Allow, Action: [dynamodb:GetItem], Resource: '*', Condition: {StringLike: {dynamodb:Attributes: [x]}}}]",
		"NotAction":       "- Statement: [{Effect: Allow, NotAction: [dynamodb:GetItem], Resource: '*'}]",
		"managed policy":  "- AWSLambdaBasicExecutionRole",
		"policy template": "- S3ReadPolicy: {BucketName: b}",
		"intrinsic":       "- Statement: [{Effect: Allow, Action: [dynamodb:GetItem], Resource: !ImportValue x}]",
	} {
		t.Run(name, func(t *testing.T) {
			src := "Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n      KeySchema: [{AttributeName: pk, KeyType: HASH}]\n" +
				"  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Policies:\n        " + policy + "\n"
			tmpl, err := samtemplate.Parse([]byte(src))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if _, err := FromTemplate(tmpl, DefaultLocal); err == nil {
				t.Fatalf("got no error, want one for an unimplemented %s", name)
			}
		})
	}
}

func TestQueueOf(t *testing.T) {
	s := parseSet(t, testTemplate)
	for name, want := range map[string]string{"t1-TestX-Work": "Work", "chat-WorkDLQ": "WorkDLQ", "other": ""} {
		if got, _ := s.QueueOf(name); got != want {
			t.Errorf("QueueOf(%q): got %q, want %q", name, got, want)
		}
	}
}

// TestProjectTemplate reads every function of template.yaml.
func TestProjectTemplate(t *testing.T) {
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromTemplate(tmpl, DefaultLocal)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	if len(s.Functions) != len(tmpl.Functions()) || s.TableKey != "pk" || s.IndexKeys["PendingTranslationIndex"] != "pending_shard" {
		t.Fatalf("got %d functions, key %q, indexes %v; want %d, pk, PendingTranslationIndex: pending_shard",
			len(s.Functions), s.TableKey, s.IndexKeys, len(tmpl.Functions()))
	}
	sweep := s.Functions["TranslationSweepFunction"]
	if got := sweep.Evaluate(Request{"dynamodb:Query", s.IndexARN("PendingTranslationIndex"), []string{"PENDING#03"}}); got != Allow {
		t.Fatalf("sweep on its index: got %v, want Allow", got)
	}
	if got := sweep.Evaluate(Request{"dynamodb:Query", s.TableARN(), []string{"CHAN#1"}}); got != ImplicitDeny {
		t.Fatalf("sweep on the table: got %v, want ImplicitDeny", got)
	}
}

// TestBucketPolicies: a statement on a bucket's objects, written with
// ${Bucket.Arn}, !GetAtt or !Ref, names arn:aws:s3:::<LogicalId>/<key>.
func TestBucketPolicies(t *testing.T) {
	src := `Parameters:
  Origin: {Type: String, Default: "*"}
Resources:
  T:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
  Files:
    Type: AWS::S3::Bucket
  Up:
    Type: AWS::Serverless::Function
    Properties:
      Environment: {Variables: {BUCKET: !Ref Files, ORIGIN: !Ref Origin}}
      Policies:
        - Statement:
            - Effect: Allow
              Action: [s3:PutObject, s3:PutObjectTagging]
              Resource: !Sub "${Files.Arn}/a/*"
            - Effect: Allow
              Action: [s3:GetObject]
              Resource: [!Join ["", [x]]]
`
	tmpl, err := samtemplate.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromTemplate(tmpl, DefaultLocal); err == nil {
		t.Fatalf("a !Join resource: got no error, want one")
	}
	src = strings.Replace(src, `[!Join ["", [x]]]`, `[!Sub "arn:${AWS::Partition}:s3:::${Files}/b/*"]`, 1)
	tmpl, err = samtemplate.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromTemplate(tmpl, DefaultLocal)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if s.Bucket != "Files" || s.ObjectARN("a/w/c/u") != "arn:aws:s3:::Files/a/w/c/u" {
		t.Fatalf("bucket %q, object ARN %q", s.Bucket, s.ObjectARN("a/w/c/u"))
	}
	for _, tc := range []struct {
		r    Request
		want Decision
	}{
		{Request{"s3:PutObject", s.ObjectARN("a/w/c/u"), nil}, Allow},
		{Request{"s3:PutObjectTagging", s.ObjectARN("a/w/c/u"), nil}, Allow},
		{Request{"s3:PutObject", s.ObjectARN("b/w/c/u"), nil}, ImplicitDeny},
		{Request{"s3:GetObject", s.ObjectARN("b/w"), nil}, Allow},
		{Request{"s3:GetObject", s.ObjectARN("a/w"), nil}, ImplicitDeny},
		{Request{"s3:DeleteObject", s.ObjectARN("a/w/c/u"), nil}, ImplicitDeny},
	} {
		if got := s.Evaluate("Up", tc.r); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.r, got, tc.want)
		}
	}
	if got, err := (&resolver{t: tmpl, s: s}).value(map[string]any{"!Ref": "Origin"}); err != nil || got != "*" {
		t.Fatalf("!Ref Origin: got %q %v, want the default *", got, err)
	}
}
