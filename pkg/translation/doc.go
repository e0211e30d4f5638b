// Package translation is the translation capability (contract section 5): it
// turns one accepted message into one translation per distinct target language
// among the readers of its channel, never into the message's own language, and
// stores each one beside the message.
//
// Translators are pluggable behind the small Translator interface (package
// amazontranslate, package apertium, and None here). A translator names the
// target languages it supports; Languages maps every reader's BCP 47 tag onto
// one of them, so that es-ES, es-MX and es cost one call with a translator that
// has one Spanish and two with a translator that has es and es-MX.
//
// The package imports nothing from AWS. It declares the storage it consumes
// (Store); package dynamo implements it.
package translation
